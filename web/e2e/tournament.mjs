// A tournament followed in the browser from before it starts to its end, on a desktop and a
// phone at once. pytest has made the accounts and the tournament (Texas 42, 2 duplicate deals
// of one hand each, 4 bot entrants) and started the bots of three entrants only; the script
// says when it has seen each stage, and pytest moves the tournament on:
//
//   "watching"  both pages show the tournament not started: pytest starts it;
//   "closed"    both show deal 1 being played behind closed doors (the fourth entrant's bot
//               is not there, so deal 1 cannot end): pytest starts that bot for 2 games;
//   "held"      both show deal 1 over (its games linked to their replays, the standings
//               counting it) and deal 2 behind closed doors (the bot stopped after 2 games):
//               pytest starts the fourth bot again;
//   then both pages follow the tournament to its end with no click and no reload, and the
//   script reports what they show: the standings, the winner, the games.
//
// Every page is checked at each stage: no sideways scroll, no serious or critical axe finding.
// TOURNAMENT_ID names the tournament; CANCELLED_ID another one, cancelled before it started.

import { check, checkPage, newPage, report, run, say, SCREENS, shot, smallTargets, TIMEOUT, URL } from "./lib.mjs";

const tournamentId = process.env.TOURNAMENT_ID;
/** How long a stage may take: bots play a one-hand game in seconds, but the machine may be
 * loaded (a hang guard, not a speed bound). */
const STAGE = TIMEOUT * 5;

/** What the tournament's page shows: its status, games and standings, as a person reads them. */
async function shown(page) {
  return page.evaluate(() => {
    const rows = (label) => [...document.querySelectorAll(`table[aria-label="${label}"] tbody tr`)]
      .map((tr) => [...tr.children].map((c) => c.textContent.trim()));
    return {
      status: document.querySelector(".t-status")?.dataset.status ?? "",
      stateLine: document.querySelector(".t-state-line")?.textContent ?? "",
      progress: document.querySelector(".t-status progress")?.getAttribute("value") ?? null,
      games: [...document.querySelectorAll("li.t-game")].map((li) => ({
        number: Number(li.dataset.number),
        deal: Number(li.dataset.deal),
        gameId: li.dataset.game ?? "",
        state: li.dataset.state,
        sides: li.querySelector(".t-sides").textContent,
        text: li.querySelector(".t-game-state").textContent,
        link: li.querySelector("a.t-go")?.getAttribute("href") ?? null,
      })),
      individuals: rows("standings of the entrants"),
      partnerships: rows("standings of the partnerships"),
      winner: document.querySelector(".t-winner h2")?.textContent ?? null,
      winnerLine: document.querySelector(".t-winner p")?.textContent ?? null,
      connection: document.querySelector(".t-head .connection")?.dataset.connection ?? null,
      noStandings: document.querySelector(".t-standings > p")?.textContent ?? null,
    };
  });
}

/** Wait until `page` shows what `test` (run in the page) accepts. */
async function waitShown(page, test, arg) {
  await page.waitForFunction(test, arg, { timeout: STAGE, polling: 200 });
}

/** Wait until `page` shows, for each [deal, state, n] of `want`, n games of that deal in that
 * state, and at least `rows` lines of standings. */
async function waitGames(page, want, rows = 0) {
  await waitShown(page, ([w, r]) => {
    const games = [...document.querySelectorAll("li.t-game")];
    const lines = document.querySelectorAll('table[aria-label="standings of the entrants"] tbody tr').length;
    return lines >= r && w.every(([deal, state, n]) => games.filter((li) => Number(li.dataset.deal) === deal && li.dataset.state === state).length === n);
  }, [want, rows]);
}

run(async (browser) => {
  check(tournamentId, "TOURNAMENT_ID is not set");
  const checked = {};
  const pages = {};
  for (const [screen, options] of Object.entries(SCREENS)) pages[screen] = await newPage(browser, options);

  // The list: the tournament, not started, with its organiser, entrants and progress.
  const listed = {};
  for (const [screen, page] of Object.entries(pages)) {
    await page.goto(`${URL}/#/tournaments`);
    const item = page.locator(`li[data-tournament="${tournamentId}"]`);
    await item.waitFor();
    listed[screen] = (await item.innerText()).replace(/\s+/g, " ").trim();
    await checkPage(page, `list (${screen})`, checked);
    // A person opens it from the list, with the keyboard.
    await item.getByRole("link").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`#/tournament/${tournamentId}$`));
    await waitShown(page, () => document.querySelector(".t-status")?.dataset.status === "not started");
    // The page is never reloaded from here to the end: this mark would be lost.
    await page.evaluate(() => { window.sameDocument = true; });
    await checkPage(page, `not started (${screen})`, checked);
  }
  const notStarted = await shown(pages.desktop);
  say("watching");

  // Deal 1 behind closed doors: both playings made, neither linked, no standings yet.
  for (const [screen, page] of Object.entries(pages)) {
    await waitGames(page, [[0, "closed", 2], [1, "to come", 2]]);
    await checkPage(page, `closed doors (${screen})`, checked);
  }
  const closed = await shown(pages.desktop);
  say("closed");

  // Deal 1 over, deal 2 behind closed doors.
  for (const [screen, page] of Object.entries(pages)) {
    await waitGames(page, [[0, "finished", 2], [1, "closed", 2]], 4);
    await checkPage(page, `deal 1 over (${screen})`, checked);
    await shot(page, `tournament-mid-${screen}`);
  }
  const held = await shown(pages.desktop);
  // A keyboard user on deal 1's first replay link keeps it while the page follows on.
  await pages.desktop.locator('li.t-game[data-number="0"] a.t-go').focus();
  say("held");

  // The end, followed with no click.
  for (const [screen, page] of Object.entries(pages)) {
    await waitShown(page, () => document.querySelector(".t-status")?.dataset.status === "finished" && document.querySelector(".t-winner"));
    check(await page.evaluate(() => window.sameDocument === true), `${screen}: the page was reloaded`);
    await checkPage(page, `finished (${screen})`, checked);
    await shot(page, `tournament-${screen}`);
  }
  const final = { desktop: await shown(pages.desktop), phone: await shown(pages.phone) };
  const focusKept = await pages.desktop.evaluate(() => document.activeElement?.getAttribute("href") ?? null);
  const small = await smallTargets(pages.phone, ".t-go, .t-name, .crumbs a, nav.top a");

  // A finished game's replay opens from its link (the embargo is lifted), by keyboard.
  const desktop = pages.desktop;
  const first = final.desktop.games.find((g) => g.link);
  await desktop.locator(`li.t-game[data-number="${first.number}"] a.t-go`).focus();
  await desktop.keyboard.press("Enter");
  await desktop.waitForURL(new RegExp(`#/replay/${first.gameId}$`));
  await desktop.locator(".verdict").waitFor();
  const replay = (await desktop.locator(".verdict").textContent()) ?? "";
  await checkPage(desktop, "replay from the tournament", checked);

  // Bad addresses get the server's reason, said plainly.
  const bad = {};
  for (const [name, id] of [["malformed", "not-a-tournament"], ["unknown", "00000000-0000-4000-8000-000000000000"]]) {
    await desktop.goto(`${URL}/#/tournament/${id}`);
    const alert = desktop.getByRole("alert");
    await alert.waitFor();
    bad[name] = (await alert.textContent()) ?? "";
    await checkPage(desktop, `${name} id`, checked);
  }

  // A tournament its organiser cancelled before it started: said so, nothing to follow.
  await desktop.goto(`${URL}/#/tournament/${process.env.CANCELLED_ID}`);
  await waitShown(desktop, () => document.querySelector(".t-status")?.dataset.status === "cancelled");
  const cancelled = await shown(desktop);
  await checkPage(desktop, "cancelled", checked);

  report({ listed, notStarted, closed, held, final, focusKept, small, replay, bad, cancelled, checked });
});
