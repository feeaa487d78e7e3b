// A spectator follows a live game to its end: the page opens the game while it waits for
// players (three of its seats for house bots) and says "watching" (pytest then seats a bot
// process in the last seat, and the game starts); it follows the WatchGame stream
// through the whole game and reports every version it received, the final line and scores.
// All along, no hand is shown face up: a spectator sees the played tiles and nothing hidden.
// GAME_ID names the game.

import { check, checkPage, newPage, report, run, say, shot, shownScores, statusLine, TIMEOUT, URL } from "./lib.mjs";

const gameId = process.env.GAME_ID;

run(async (browser) => {
  check(gameId, "GAME_ID is not set");
  const page = await newPage(browser);
  await page.goto(`${URL}/#/game/${gameId}`);
  await page.getByRole("heading", { name: "Waiting for players" }).waitFor();
  const meta = await page.locator(".game-head .meta").textContent();
  check(meta.includes("watching as a spectator"), `not a spectator: ${meta}`);
  await page.locator(".connection.live").waitFor();
  // Every page on the way: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  await checkPage(page, "waiting for players", checked);
  // Anything face up that is not on the table's trick, at any moment, is a leak.
  await page.evaluate(() => {
    window.leaks = [];
    // A trick in progress drawn while the game was on (bots may finish faster than a
    // screenshot is taken, so the page itself notes it).
    window.midGame = false;
    new MutationObserver(() => {
      const shown = document.querySelectorAll(".hand, .seat .tile:not(.back)");
      if (shown.length) window.leaks.push(document.querySelector(".table-view")?.dataset.version);
      // (A hand's result shown before the end is the game followed mid-way too: the page holds
      // the table as the hand ended while the result is up, and quick bots may finish the next
      // hands meanwhile.)
      if ((document.querySelector(".table-view .played") || document.querySelector(".hand-summary button")) && !document.querySelector(".turn-line.over")) window.midGame = true;
    }).observe(document.body, { childList: true, subtree: true });
  });
  say("watching");
  await page.getByRole("heading", { name: "Waiting for players" }).waitFor({ state: "detached" });
  const over = page.locator(".turn-line.over");
  await page.locator(".table-view .played").first().or(over).waitFor({ timeout: TIMEOUT * 5 });
  if (!(await over.count())) {
    await shot(page, "spectator-mid-game");
    await checkPage(page, "mid-game", checked);
  }
  await over.waitFor({ timeout: TIMEOUT * 5 });
  const midGame = await page.evaluate(() => window.midGame);
  const versions = await page.evaluate(() =>
    performance.getEntriesByType("mark").filter((m) => m.name.startsWith("boneyard:version:")).map((m) => Number(m.name.split(":")[2])),
  );
  await shot(page, "spectator-game-over");
  await checkPage(page, "game over", checked);
  report({
    gameId,
    midGame,
    versions,
    final: await statusLine(page),
    scores: await shownScores(page),
    leaks: await page.evaluate(() => window.leaks.length),
    checked,
  });
});
