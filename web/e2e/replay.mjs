// The replay of an archived game: the archive lists it, the replay page shows the server's
// verification verdict, and steps through the game move by move, trick by trick and hand by
// hand with every hand face up, to the final score. GAME_ID names a finished game.

import { check, checkPage, newPage, report, run, shot, shownScores, statusLine, URL } from "./lib.mjs";

const gameId = process.env.GAME_ID;

/** The step's caption ("Event 3 of 120: ...") and the face-up tiles in the seats' hands. */
async function step(page) {
  const caption = (await page.getByRole("status", { name: "this step" }).textContent()) ?? "";
  const inHands = await page.locator(".seat .mini-hand [data-tile]").count();
  return { caption, inHands };
}

async function press(page, name) {
  const before = await step(page);
  await page.getByRole("navigation", { name: "replay" }).getByRole("button", { name, exact: true }).click();
  await page.waitForFunction((c) => document.querySelector(".step")?.textContent !== c, before.caption);
  return step(page);
}

run(async (browser) => {
  check(gameId, "GAME_ID is not set");
  const page = await newPage(browser);
  // Every page on the way: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  await page.goto(`${URL}/#/archive`);
  await page.locator(`tr[data-game="${gameId}"] a`).waitFor();
  await checkPage(page, "archive", checked);
  await page.locator(`tr[data-game="${gameId}"] a`).click();
  await page.waitForURL(new RegExp(`#/replay/${gameId}`));
  const verdict = (await page.locator(".verdict").textContent()) ?? "";
  const start = await step(page);
  await shot(page, "replay-start");
  await checkPage(page, "replay", checked);
  const move = await press(page, "Next move");
  const trick = await press(page, "Next trick");
  const hand = await press(page, "Next hand");
  const hand2 = await press(page, "Next hand");
  const back = await press(page, "Previous hand");
  await page.keyboard.press("ArrowRight");
  const key = await step(page);
  const end = await press(page, "End");
  await shot(page, "replay-end");
  await checkPage(page, "replay at the end", checked);
  report({
    verdict,
    steps: { start, move, trick, hand, hand2, back, key, end },
    final: await statusLine(page),
    scores: await shownScores(page),
    url: page.url().replace(URL, ""),
    checked,
  });
});
