// A Moon hand with the widow exchange: the game (opener seat 0, a clock) waits in the lobby
// with two of the server's house bots seated; the person joins seat 0 there, shoots the moon, takes the widow by laying out a
// tile of the hand, names trump and plays the hand out. GAME_ID names the game.

import {
  check, checkOnlyLegalClickable, checkPage, handResult, newPage, pickRandom, random, report, resign, run, seatToken, shot, takeTurn, URL,
  waitTurn,
} from "./lib.mjs";

const gameId = process.env.GAME_ID;

/** The tiles shown in the seat's hand, by name. */
async function handTiles(page) {
  const tiles = page.getByRole("region", { name: "your hand" }).locator("[data-tile]");
  return (await tiles.evaluateAll((ts) => ts.map((t) => t.getAttribute("aria-label")))).sort();
}

run(async (browser) => {
  check(gameId, "GAME_ID is not set");
  const page = await newPage(browser);
  const rng = random();
  // Every page on the way: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  await page.goto(`${URL}/#/`);
  await page.getByLabel("Your name:").fill("carol");
  const entry = page.getByRole("region", { name: "open games" }).locator(`li[data-game="${gameId}"]`);
  await entry.waitFor();
  await checkPage(page, "lobby", checked);
  await entry.getByRole("button", { name: "Join seat 0" }).click();
  await page.waitForURL(new RegExp(`#/game/${gameId}`));

  check((await waitTurn(page)) === "turn", "no turn for seat 0");
  await checkOnlyLegalClickable(page, gameId);
  // The table has a clock: every seat shows its bank, the seat to act its time running out.
  const banks = await page.locator(".seat .bank").allTextContents();
  check(banks.length === 3 && banks.every((b) => /bank \d+:\d\d/.test(b)), `banks shown: ${banks}`);
  const mine = page.getByRole("region", { name: "seat 0" }).locator(".countdown");
  const first = await mine.textContent();
  await page.waitForFunction((t) => document.querySelector(".seat.you .countdown")?.textContent !== t, first);
  const clock = { banks, countdown: [first, await mine.textContent()] };
  await checkPage(page, "table with a clock", checked);
  await takeTurn(page, (cs) => {
    const moon = cs.find((c) => c.label === "Shoot the moon");
    check(moon, `no moon among ${cs.map((c) => c.label)}`);
    return moon;
  });

  check((await waitTurn(page)) === "turn", "no widow turn after winning the auction");
  const prompt = await page.getByRole("region", { name: "your hand" }).getByRole("heading").textContent();
  check(prompt.includes("lay out"), `the widow is not asked for: ${prompt}`);
  await checkOnlyLegalClickable(page, gameId);
  const before = await handTiles(page);
  await shot(page, "moon-widow");
  await checkPage(page, "widow", checked);
  const discarded = await takeTurn(page, (cs) => {
    check(cs.every((c) => c.kind === "tile"), "the widow (must exchange) offers more than tiles");
    return pickRandom(rng)(cs);
  });

  check((await waitTurn(page)) === "turn", "no trump turn after the widow");
  const after = await handTiles(page);
  const taken = after.filter((t) => !before.includes(t));
  check(!after.includes(discarded), `${discarded} is still in hand after laying it out`);
  check(taken.length === 1 && after.length === before.length, `hand before ${before}, after ${after}`);
  const contract = await page.locator(".table-view .contract").textContent();
  check(contract.includes("you laid out a tile"), `the laid-out tile is not mentioned: ${contract}`);
  await checkOnlyLegalClickable(page, gameId);
  const trump = await takeTurn(page, pickRandom(rng));

  let plays = 0;
  for (;;) {
    const state = await waitTurn(page, 2);
    if (state !== "turn") break;
    await checkOnlyLegalClickable(page, gameId);
    await takeTurn(page, pickRandom(rng));
    plays++;
  }
  const result = await handResult(page, 1, /the moon and (made it|was set|were set)/);
  await shot(page, "moon-after-hand");
  await checkPage(page, "after the hand", checked);
  // (The game ends: a game with house bots left in play counts against the server's limit.)
  await resign(gameId, await seatToken(page, gameId));
  report({ gameId, before, after, discarded, taken: taken[0], trump, plays, result, clock, checked });
});
