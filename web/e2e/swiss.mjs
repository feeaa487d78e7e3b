// A Swiss tournament's page once it is over, on a desktop and a phone: pytest has played it
// (Texas 42, three bot entrants, two rounds of one deal a pairing: one entrant sits out each
// round). The script reports what each page shows, as a person reads it: the winner, the
// standings with their tie-breaks, each round's pairings and bye, and the games by deal.
// Every page is checked: no sideways scroll, no serious or critical axe finding.
// TOURNAMENT_ID names the tournament.

import { check, checkPage, newPage, report, run, SCREENS, shot, URL } from "./lib.mjs";

const tournamentId = process.env.TOURNAMENT_ID;

run(async (browser) => {
  check(tournamentId, "TOURNAMENT_ID is not set");
  const checked = {};
  const seen = {};
  for (const [screen, options] of Object.entries(SCREENS)) {
    const page = await newPage(browser, options);
    await page.goto(`${URL}/#/tournament/${tournamentId}`);
    await page.locator('table[aria-label="standings of the entrants"] tbody tr').first().waitFor();
    await page.locator(".t-winner h2").waitFor();
    seen[screen] = await page.evaluate(() => ({
      meta: document.querySelector(".t-head .meta")?.textContent ?? "",
      stateLine: document.querySelector(".t-state-line")?.textContent ?? "",
      winner: document.querySelector(".t-winner h2")?.textContent ?? null,
      winnerLine: document.querySelector(".t-winner p")?.textContent ?? null,
      head: [...document.querySelectorAll('table[aria-label="standings of the entrants"] thead th')].map((c) => c.textContent.trim()),
      standings: [...document.querySelectorAll('table[aria-label="standings of the entrants"] tbody tr')]
        .map((tr) => [...tr.children].map((c) => c.textContent.trim())),
      rounds: [...document.querySelectorAll("section.t-round")].map((s) => ({
        title: s.querySelector("h3").textContent,
        pairings: [...s.querySelectorAll("li.t-pairing")].map((li) => ({ first: li.dataset.first, second: li.dataset.second, state: li.dataset.state, text: li.textContent })),
        bye: s.querySelector("li.t-bye")?.dataset.bye ?? null,
      })),
      deals: [...document.querySelectorAll("section.t-deal h3")].map((h) => h.textContent),
      games: document.querySelectorAll("li.t-game").length,
    }));
    await checkPage(page, `swiss (${screen})`, checked);
    await shot(page, `swiss-${screen}`);
  }
  report({ seen, checked });
});

