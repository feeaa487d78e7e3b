// A new player plays a whole game against the computer from one click in the lobby, on the
// screen SCREEN names (desktop 1280x800 or phone 390x844): the lobby's "Play the computer"
// (name, game, bots' strength, Play) lands them at the table in seat 0; they click a legal tile
// or button on every turn (one by the keyboard), and see each hand's result until they press
// Continue. On the way: a reload and a spectator arriving mid-hand both find the whole current
// hand in "What happened", in order; and every page (lobby, table, hand result, help, archive,
// replay) is checked for sideways scrolling and by axe-core. Screenshots of each.

import {
  axeFindings, check, checkOnlyLegalClickable, checkPage, newPage, pickRandom, random, report, run, SCREENS,
  shot, smallTargets, statusLine, summaries, takeTurn, URL, waitTurn,
} from "./lib.mjs";

const screen = process.env.SCREEN ?? "desktop";
const game = process.env.GAME ?? "Texas 42";
const bots = process.env.BOTS ?? "heuristic";

/** The lines of "What happened", oldest first. */
async function logLines(page) {
  return page.getByRole("region", { name: "what happened" }).locator("li").allTextContents();
}

/** The current hand's number, from the table's hand line. */
async function handNumber(page) {
  const line = (await page.locator(".table-view .contract").textContent()) ?? "";
  return Number(/^Hand (\d+)/.exec(line)?.[1] ?? 0);
}

/** "What happened" holds the current hand from its deal, in order: the deal line first. */
async function holdsTheHand(page, hand) {
  await page.waitForFunction((n) => [...document.querySelectorAll(".log li")].some((li) => li.textContent.startsWith(`Hand ${n} dealt`)), hand);
  const lines = await logLines(page);
  const deal = lines.findIndex((l) => l.startsWith(`Hand ${hand} dealt`));
  check(deal >= 0, `no deal of hand ${hand} in ${lines}`);
  // Nothing of an earlier hand after this deal: the order is oldest first.
  check(!lines.slice(deal + 1).some((l) => / dealt:/.test(l)), `lines out of order: ${lines}`);
  return lines.slice(deal);
}

run(async (browser) => {
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  const page = await newPage(browser, options);
  const rng = random();
  const checked = {};

  await page.goto(`${URL}/#/`);
  const panel = page.getByRole("form", { name: "play the computer" });
  await panel.waitFor();
  await page.getByRole("form", { name: "new game" }).waitFor();
  await checkPage(page, "lobby", checked);
  await shot(page, `lobby-${screen}`);
  await panel.getByLabel("Your name:").fill("nina");
  await panel.getByLabel(game, { exact: true }).check();
  await panel.getByLabel("Bots").selectOption(bots);
  const small = await smallTargets(page, "button, nav a, select, input:not([type=radio]), label.radio");
  check(!small.length, `too small to tap in the lobby: ${small}`);
  await panel.getByRole("button", { name: "Play" }).click();
  await page.waitForURL(/#\/game\//);
  const gameId = decodeURIComponent(/#\/game\/([^/]+)/.exec(page.url())[1]);
  await page.locator(".table-view").waitFor();
  const meta = (await page.locator(".game-head .meta").textContent()) ?? "";
  check(meta.includes("you play seat 0"), `the player is not seated: ${meta}`);

  let turns = 0;
  let keyboard = false;
  let reloaded = false;
  let spectated = null;
  let faceDown = 0;
  let tableChecked = false;
  let summaryShot = false;
  const hands = new Set();
  for (;;) {
    const state = await waitTurn(page, 0, async () => {
      if (summaryShot) return;
      summaryShot = true;
      await checkPage(page, "hand result", checked);
      await shot(page, `hand-summary-${screen}`);
    });
    if (state === "over") break;
    turns++;
    const hand = await handNumber(page);
    hands.add(hand);
    await checkOnlyLegalClickable(page, gameId);
    if (turns === 1) {
      // Another player's hand is one picture to a screen reader: "7 tiles, face down".
      faceDown = await page.getByRole("img", { name: /^\d+ tiles?, face down$/ }).count();
    }
    const playing = await page.getByRole("region", { name: "your hand" }).getByRole("button").count();
    if (playing && !tableChecked) {
      tableChecked = true;
      await checkPage(page, "table", checked);
      const tiny = await smallTargets(page, ".hand button.tile, .choices button, .resign button");
      check(!tiny.length, `too small to tap at the table: ${tiny}`);
      await shot(page, `table-${screen}`);
    }
    if (turns === 4 && !reloaded) {
      // A reload keeps the seat and the whole current hand in "What happened".
      await page.reload();
      const again = await waitTurn(page);
      await holdsTheHand(page, await handNumber(page));
      reloaded = true;
      if (again === "over") break;
    }
    if (turns === 6 && !spectated) {
      // A spectator arriving mid-hand (another browser, no seat) sees the hand so far.
      const watcher = await newPage(browser, options);
      await watcher.goto(`${URL}/#/game/${gameId}`);
      await watcher.locator(".table-view").waitFor();
      const watching = (await watcher.locator(".game-head .meta").textContent()) ?? "";
      check(watching.includes("watching as a spectator"), `not a spectator: ${watching}`);
      const shown = await handNumber(watcher);
      const lines = await holdsTheHand(watcher, shown);
      spectated = { hand: shown, lines: lines.length };
      await watcher.context().close();
    }
    if (turns === 2) {
      // One turn by the keyboard: the first legal control, focused and pressed with Enter.
      await page.locator(".choices button:not([disabled]), .hand button.tile").first().focus();
      const version = Number(await page.locator(".table-view").getAttribute("data-version"));
      await page.keyboard.press("Enter");
      await page.waitForFunction((v) => Number(document.querySelector(".table-view")?.dataset.version) > v, version);
      keyboard = true;
      continue;
    }
    try {
      await takeTurn(page, pickRandom(rng));
    } catch (error) {
      await shot(page, `failed-${screen}`);
      throw error;
    }
  }
  const final = await statusLine(page);
  const finalSummary = (await page.locator(".hand-summary h2").textContent().catch(() => "")) ?? "";
  await checkPage(page, "game over", checked);
  await shot(page, `game-over-${screen}`);

  await page.getByRole("navigation", { name: "pages" }).getByRole("link", { name: "Help" }).click();
  await page.getByRole("heading", { name: "How to play" }).waitFor();
  await checkPage(page, "help", checked);
  await page.getByRole("navigation", { name: "pages" }).getByRole("link", { name: "Archive" }).click();
  const listed = page.locator(`tr[data-game="${gameId}"] a`);
  await listed.waitFor();
  await checkPage(page, "archive", checked);
  await listed.click();
  await page.locator(".verdict").waitFor();
  await page.getByRole("navigation", { name: "replay" }).getByRole("button", { name: "Next trick", exact: true }).click();
  await checkPage(page, "replay", checked);
  await shot(page, `replay-${screen}`);
  report({
    gameId,
    screen,
    turns,
    hands: hands.size,
    keyboard,
    reloaded,
    spectated,
    faceDown,
    summaries,
    finalSummary,
    final,
    checked: Object.fromEntries(Object.entries(checked).map(([k, v]) => [k, v.findings.length + (v.sideways ? 1 : 0)])),
    axe: (await axeFindings(page)).length,
  });
});
