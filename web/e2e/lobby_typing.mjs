// A person types their name in the lobby while the lobby redraws (its lists come back from the
// server): the field keeps the focus and the caret, and what they type after the redraw lands
// in it. The redraw here is the Refresh button's, pressed from script so the focus stays where
// the person left it.

import { newPage, report, run, TIMEOUT, URL } from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  await page.goto(`${URL}/#/`);
  await page.getByRole("region", { name: "games in play" }).waitFor();
  const field = page.getByLabel("Your name:");
  await field.fill("");
  await field.focus();
  await page.keyboard.type("ali");
  const listed = page.waitForResponse((r) => r.url().endsWith("/boneyard.v1.GameService/ListGames"), { timeout: TIMEOUT });
  const redrawn = page.evaluate(() => new Promise((resolve) => {
    new MutationObserver((_, watch) => { watch.disconnect(); resolve(true); }).observe(document.getElementById("app"), { childList: true, subtree: true });
  }));
  await page.evaluate(() => [...document.querySelectorAll("button")].find((b) => b.textContent === "Refresh").click());
  await listed;
  await redrawn; // the lobby draws at once, not at the next frame
  const focused = await page.evaluate(() => document.activeElement?.id ?? "");
  await page.keyboard.type("ce");
  report({ focused, name: await field.inputValue() });
});
