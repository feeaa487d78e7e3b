// A person types their name in the lobby while the lobby redraws (a game created elsewhere comes
// down its live stream): the field keeps the focus and the caret, and what they type after the
// redraw lands in it.

import { call, checkPage, newPage, report, run, TIMEOUT, URL } from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  await page.goto(`${URL}/#/`);
  await page.locator(".lobby-head .connection.live").waitFor();
  const field = page.getByLabel("Your name:");
  await field.fill("");
  await field.focus();
  await page.keyboard.type("ali");
  // The watch on the page is set before the game is made: its redraw cannot be missed.
  await page.evaluate(() => {
    window.__redrawn = new Promise((resolve) => {
      new MutationObserver((_, watch) => { watch.disconnect(); resolve(true); }).observe(document.getElementById("app"), { childList: true, subtree: true });
    });
  });
  const { gameId } = await call("GameService", "CreateGame", { rules: { preset: "texas42" }, name: "typed over" });
  await page.evaluate(() => window.__redrawn);
  await page.locator(`li[data-game="${gameId}"]`).waitFor({ timeout: TIMEOUT });
  const focused = await page.evaluate(() => document.activeElement?.id ?? "");
  await page.keyboard.type("ce");
  const name = await field.inputValue();
  // The lobby as redrawn: no sideways scroll, nothing serious or critical for axe.
  await checkPage(page, "lobby", {});
  report({ focused, name });
});
