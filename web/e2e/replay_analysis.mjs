// The analysis in the replay of an archived game (GAME_ID, finished), on the screen SCREEN names:
// for every hand, step the replay into it, wait for its analysis, and report what a person reads
// of each play (who played what, its verdict, each legal tile's value), to be compared with
// ArchiveService.AnalyzeHand. A play that cost is then shown (its row pressed), and the page is
// checked for sideways scrolling and by axe-core, with screenshots.

import { check, checkPage, newPage, OUT_DIR, report, run, say, SCREENS, shot, URL } from "./lib.mjs";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const gameId = process.env.GAME_ID;
const screen = process.env.SCREEN ?? "desktop";

async function caption(page) {
  return (await page.getByRole("status", { name: "this step" }).textContent()) ?? "";
}

async function press(page, name) {
  const before = await caption(page);
  await page.getByRole("navigation", { name: "replay" }).getByRole("button", { name, exact: true }).click();
  await page.waitForFunction((c) => document.querySelector(".step")?.textContent !== c, before);
}

/** The analysis as shown, once it has come: its hand, summary, and each play as read. */
async function shownAnalysis(page) {
  await page.locator('.analysis:not([data-state="loading"])').waitFor();
  return page.locator(".analysis").evaluate((panel) => ({
    hand: Number(panel.getAttribute("data-hand")),
    state: panel.getAttribute("data-state"),
    summary: panel.querySelector(".an-summary")?.textContent ?? panel.querySelector("p")?.textContent ?? "",
    plays: [...panel.querySelectorAll(".an-play")].map((play) => ({
      seat: Number(play.getAttribute("data-seat")),
      head: play.querySelector(".an-go")?.textContent ?? "",
      verdict: play.querySelector(".an-badge")?.textContent ?? "",
      values: [...play.querySelectorAll(".an-value")].map((v) => [v.querySelector(".an-tile")?.textContent, Number(v.querySelector(".an-number")?.textContent)]),
    })),
  }));
}

async function viewportShot(page, name) {
  mkdirSync(OUT_DIR, { recursive: true });
  const path = join(OUT_DIR, `${name}.png`);
  await page.screenshot({ path });
  say("screenshot", path);
}

run(async (browser) => {
  check(gameId, "GAME_ID is not set");
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  const page = await newPage(browser, options);
  await page.goto(`${URL}/#/replay/${gameId}`);
  const hands = [];
  for (;;) {
    const shown = { ...(await shownAnalysis(page)), step: await page.locator("#replay-step").inputValue() };
    if (!hands.length || hands[hands.length - 1].hand !== shown.hand) hands.push(shown);
    await press(page, "Next hand"); // this hand's scoring, or the end
    if ((await caption(page)).includes("Game over")) break;
    await press(page, "Next move"); // the next deal, or the end
    if ((await caption(page)).includes("Game over")) break;
  }
  // Show a play that cost (the costliest of the game), as a person would: its row pressed.
  let worst;
  hands.forEach((hand) => hand.plays.forEach((play, i) => {
    const cost = Number(/cost (\d+)/.exec(play.verdict)?.[1] ?? 0);
    if (cost && (!worst || cost > worst.cost)) worst = { hand: hand.hand, index: i, cost };
  }));
  let note = "";
  if (worst) {
    // To the deal of that hand (the step slider), then the play's row.
    await page.locator("#replay-step").fill(hands.find((h) => h.hand === worst.hand).step);
    await page.locator(`.analysis[data-hand="${worst.hand}"][data-state="done"]`).waitFor();
    await page.locator(".analysis .an-play").nth(worst.index).locator("button.an-go").click();
    await page.locator(".analysis .an-play.an-current").waitFor();
    note = (await page.locator(".step-analysis").textContent()) ?? "";
  }
  const checked = {};
  await checkPage(page, "replay with analysis", checked);
  if (screen === "phone") {
    // The step with its note and the table, then the analysis itself, a screen each.
    await page.evaluate(() => window.scrollTo(0, document.querySelector(".step").getBoundingClientRect().top + window.scrollY - 8));
    await viewportShot(page, `replay-step-${screen}`);
    await page.evaluate(() => window.scrollTo(0, document.querySelector(".analysis").getBoundingClientRect().top + window.scrollY - 8));
    await viewportShot(page, `replay-analysis-${screen}`);
  } else {
    await shot(page, `replay-analysis-${screen}`);
  }
  report({ hands, worst, note, checked });
});
