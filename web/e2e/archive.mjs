// The archive as a person uses it, on the screen SCREEN names: the list of finished games with
// their preset, players and winner; the preset filter, a select of the server's presets; the
// signing key's fingerprint; then the replay of GAME_ID (a finished game of preset PRESET),
// its verdict, and its record downloaded as JSON and as text (saved under OUT_DIR). The page is
// checked for sideways scrolling, small tap targets and by axe-core, with screenshots; the
// pytest compares what was read with the server and the command line.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { check, checkPage, newPage, OUT_DIR, report, run, say, SCREENS, shot, smallTargets, URL } from "./lib.mjs";

const gameId = process.env.GAME_ID;
const preset = process.env.PRESET;
const screen = process.env.SCREEN ?? "desktop";

/** The games as the list shows them: each row's values, as a person reads them. */
async function shownGames(page) {
  return page.locator("table.archive-games tbody tr").evaluateAll((rows) => rows.map((row) => ({
    game: row.getAttribute("data-game"),
    name: row.querySelector("th a")?.textContent ?? "",
    preset: row.querySelector(".preset-name")?.textContent ?? "",
    players: row.querySelector(".players")?.textContent ?? "",
    winner: row.querySelector(".winner")?.textContent ?? "",
    score: row.querySelector(".final")?.textContent ?? "",
  })));
}

/** Press a download button and save what the browser downloads. */
async function download(page, name) {
  const [file] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("region", { name: "download the record" }).getByRole("button", { name, exact: true }).click(),
  ]);
  mkdirSync(OUT_DIR, { recursive: true });
  const path = join(OUT_DIR, `${screen}-${file.suggestedFilename()}`);
  await file.saveAs(path);
  check(!(await file.failure()), `the download of ${name} failed: ${await file.failure()}`);
  say("downloaded", path);
  return { path, suggested: file.suggestedFilename() };
}

run(async (browser) => {
  check(gameId && preset, "GAME_ID and PRESET are not set");
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  const page = await newPage(browser, { ...options, acceptDownloads: true });
  const checked = {};

  await page.goto(`${URL}/#/archive`);
  await page.locator(`tr[data-game="${gameId}"]`).waitFor();
  await page.locator(".signing-key .fingerprint").waitFor();
  // The select is filled from ListPresets once it answers.
  const select = page.getByLabel("Preset", { exact: true });
  await page.waitForFunction(() => document.querySelectorAll("#archive-preset option").length > 1);
  const presetOptions = await select.locator("option").evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  const fingerprint = (await page.locator(".signing-key .fingerprint").textContent()) ?? "";
  const all = await shownGames(page);
  await checkPage(page, "archive", checked);
  const small = await smallTargets(page, "main a, main button, main select, main input");
  check(!small.length, `small tap targets on the archive: ${small}`);
  await shot(page, `archive-${screen}`);

  // Filter by preset, as a person would: choose it in the select.
  await select.selectOption(preset);
  await page.waitForFunction(
    (p) => {
      const rows = [...document.querySelectorAll("table.archive-games tbody tr .preset-name")];
      return rows.length > 0 && rows.every((r) => r.textContent === p);
    },
    preset,
  );
  const filtered = await shownGames(page);
  await checkPage(page, "archive filtered", checked);
  await shot(page, `archive-filtered-${screen}`);

  // The game's replay, from its row, and its record downloaded both ways.
  await page.locator(`tr[data-game="${gameId}"] a`).click();
  await page.waitForURL(new RegExp(`#/replay/${gameId}`));
  const verdict = (await page.locator(".verdict").textContent()) ?? "";
  const json = await download(page, "Download JSON");
  const text = await download(page, "Download as text");
  // The buttons stay, and keep working, by keyboard too.
  await page.getByRole("button", { name: "Download JSON", exact: true }).focus();
  const [again] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
  const keyboard = again.suggestedFilename();
  await checkPage(page, "replay with downloads", checked);
  const smallReplay = await smallTargets(page, ".downloads button");
  check(!smallReplay.length, `small download buttons: ${smallReplay}`);
  // The replay's head (verdict, downloads) as the screen shows it.
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = join(OUT_DIR, `archive-replay-${screen}.png`);
  await page.screenshot({ path: top });
  say("screenshot", top);
  report({ presetOptions, fingerprint, all, filtered, verdict, json, text, keyboard, host: new globalThis.URL(URL).host, checked });
});
