// What the browser tests share: Debian's Chromium driven by playwright-core, lines to the
// pytest that runs the script ("game ID", "report {...}"), screenshots, and a person's way of
// taking a turn: wait for "Your turn", check that what can be clicked is exactly what the
// server says is legal, click one of them, wait for the table to move on.
//
// Environment: BONEYARD_URL (the HTTP listener), OUT_DIR (screenshots), CHROMIUM (default
// /usr/bin/chromium), SEED (the choices' random seed), TIMEOUT_MS (a hang guard, not a speed
// bound).

import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const URL = process.env.BONEYARD_URL ?? "http://127.0.0.1:8080";
export const OUT_DIR = process.env.OUT_DIR ?? "build/e2e";
export const TIMEOUT = Number(process.env.TIMEOUT_MS ?? 120000);
/** The two screens every page is tried at: a desktop and a phone. */
export const SCREENS = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};

/** The hand results the page showed between hands (their headings), in order: waitTurn notes
 * each and presses Continue, as a person would. */
export const summaries = [];

/** The game stream's route, for page.route: a script cuts or refuses it there. */
export const WATCH = "**/boneyard.v1.GameService/WatchGame";

/** The lobby's stream's route, for page.route. */
export const WATCH_LOBBY = "**/boneyard.v1.GameService/WatchLobby";

/** Another client than the page: a unary call over Connect's JSON form from the script itself
 * (`token`: as that seat). Rejects with the server's code and message on a refusal. */
export async function call(service, method, body, token) {
  const answer = await fetch(`${URL}/boneyard.v1.${service}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = await answer.json();
  if (!answer.ok) fail(`${service}.${method}: ${json.code}: ${json.message}`);
  return json;
}

/** A line for pytest on stdout. */
export function say(...words) {
  process.stdout.write(`${words.join(" ")}\n`);
}

export function report(values) {
  say("report", JSON.stringify(values));
}

export function fail(message) {
  throw new Error(message);
}

export function check(condition, message) {
  if (!condition) fail(message);
}

export async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
  return browser;
}

/** A page of a new context; the page's console errors go to stderr (and fail nothing). */
export async function newPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 1000 }, ...options });
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") process.stderr.write(`console: ${m.text()}\n`); });
  page.on("pageerror", (e) => process.stderr.write(`page error: ${e.message}\n`));
  return page;
}

export async function shot(page, name) {
  mkdirSync(OUT_DIR, { recursive: true });
  const path = join(OUT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  say("screenshot", path);
  return path;
}

/** mulberry32: the choices are random but replayable from SEED. */
export function random(seed = Number(process.env.SEED ?? 1)) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gameIdOf(page) {
  const match = /#\/game\/([^/]+)/.exec(page.url());
  check(match, `not on a game page: ${page.url()}`);
  return decodeURIComponent(match[1]);
}

/** The version the page shows. */
export async function shownVersion(page) {
  return Number(await page.locator(".table-view").getAttribute("data-version"));
}

/** The text a person reads on the status line ("Your turn: ...", "Game over: ..."). */
export async function statusLine(page) {
  return (await page.locator(".table-view .turn-line").textContent()) ?? "";
}

/** Create a game in the lobby's form: `options` maps an option's label to its value. */
/** Create a game in the lobby's form: `houseBots` maps a seat to the strategy of the server's
 * bot that plays it. */
export async function createGame(page, { preset, name = "", seat = "0", options = {}, playerName = "alice", houseBots = {} }) {
  await page.goto(`${URL}/#/`);
  await page.getByLabel("Your name:").fill(playerName);
  const form = page.getByRole("form", { name: "new game" });
  await form.getByLabel("game", { exact: true }).selectOption(preset);
  await form.getByLabel("name", { exact: true }).fill(name);
  if (Object.keys(options).length) {
    await form.getByText("Options (unset: the preset's value)").click();
    for (const [label, value] of Object.entries(options)) {
      const input = form.getByLabel(label, { exact: true });
      if ((await input.evaluate((e) => e.tagName)) === "SELECT") await input.selectOption(value);
      else await input.fill(value);
    }
  }
  for (const [botSeat, strategy] of Object.entries(houseBots)) {
    await form.getByLabel(`seat ${botSeat} played by`).selectOption(strategy);
  }
  await form.getByLabel("your seat").selectOption(seat);
  await form.getByRole("button", { name: "Create the game" }).click();
  await page.waitForURL(/#\/game\//);
  return gameIdOf(page);
}

/** The seat's legal actions as the server lists them now, asked over Connect's JSON form with
 * the token the page keeps: the check on what the page lets a person click. */
export async function serverLegal(page, gameId) {
  return page.evaluate(async (id) => {
    const held = JSON.parse(localStorage.getItem(`boneyard.seat.${id}`));
    const answer = await fetch(`/boneyard.v1.GameService/GetView`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${held.token}` },
      body: JSON.stringify({ gameId: id }),
    });
    const { view } = await answer.json();
    return { version: Number(view.version), legal: view.legalActions ?? [] };
  }, gameId);
}

function tileName(tile) {
  let high = 0;
  while (((high + 1) * (high + 2)) / 2 <= tile) high++;
  return `${high}-${tile - (high * (high + 1)) / 2}`;
}

/** Wait for this seat's turn, the game's end, or (with `stopAtHand`) the deal of that hand:
 * "turn", "over" or "stop". A hand's result shown on the way is noted (`summaries`) and
 * continued from, with the Continue button. */
export async function waitTurn(page, stopAtHand = 0, onSummary = async () => {}) {
  for (;;) {
    const state = await waitTurnOrSummary(page, stopAtHand);
    if (state !== "summary") return state;
    const heading = (await page.locator(".hand-summary h2").textContent()) ?? "";
    await onSummary(page);
    // The game may have ended meanwhile (its last hand's result came a moment before the end
    // of the game): that result stays, with the final table and no Continue. The end may also
    // come while Continue is being pressed: then it is not pressed.
    const over = page.locator(".turn-line.over");
    const next = page.locator(".hand-summary").getByRole("button", { name: "Continue" });
    await next.or(over).first().waitFor();
    if (await over.count()) continue;
    const first = await Promise.race([
      next.click().then(() => "pressed", () => "failed"),
      over.waitFor().then(() => "over", () => "failed"),
    ]);
    if (first === "over") continue;
    check(first === "pressed", "the hand's result was neither continued from nor followed by the game's end");
    summaries.push(heading);
    await page.locator(".hand-summary button").waitFor({ state: "detached" });
  }
}

async function waitTurnOrSummary(page, stopAtHand) {
  const state = await page.waitForFunction(
    (stop) => {
      if (document.querySelector(".turn-line.over")) return "over";
      if (document.querySelector(".hand-summary button")) return "summary";
      const hand = /^Hand (\d+)/.exec(document.querySelector(".table-view .contract")?.textContent ?? "");
      if (stop && hand && Number(hand[1]) >= stop) return "stop";
      // Choosing is possible once the page is not waiting for an answer of its own.
      const ready = document.querySelector(".hand button.tile, .choices button:not([disabled])");
      if (document.querySelector(".turn-line.yours") && ready) return "turn";
      return false;
    },
    stopAtHand,
    { timeout: TIMEOUT },
  );
  return state.jsonValue();
}

/** What the page lets a person click now: the tiles (by name) and the other choices (by text). */
export async function clickable(page) {
  const tiles = await page.getByRole("region", { name: "your hand" }).getByRole("button").evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-label")));
  const choices = await page.getByRole("region", { name: "your choices" }).getByRole("button").evaluateAll((bs) => bs.filter((b) => !b.disabled).map((b) => b.textContent));
  return { tiles, choices };
}

/** Check the page offers exactly the server's legal actions: every legal tile is a button, no
 * other tile is, and there is one choice button per other legal action. */
export async function checkOnlyLegalClickable(page, gameId) {
  const version = await shownVersion(page);
  const { version: now, legal } = await serverLegal(page, gameId);
  if (now !== version) return false; // the game moved on meanwhile: nothing to compare
  const { tiles, choices } = await clickable(page);
  const legalTiles = legal
    .map((a) => a.playTile?.tile ?? a.exchangeWidow?.discard)
    .filter((t) => t !== undefined)
    .map(tileName)
    .sort();
  const others = legal.filter((a) => !a.playTile && !a.exchangeWidow).length;
  check(JSON.stringify([...tiles].sort()) === JSON.stringify(legalTiles), `clickable tiles ${tiles} but legal ${legalTiles}`);
  check(choices.length === others, `${choices.length} choice buttons (${choices}) for ${others} legal non-tile actions`);
  return true;
}

/** Click `target` (a locator) and wait until the page shows a later version or a refusal of
 * this click. A refusal already on the page answered an earlier click, and it stays drawn until
 * the next frame, so only a refusal drawn after the click counts (the page draws its state as
 * it is at the frame, and the click has cleared the old refusal by then). */
export async function clickAndWait(page, target) {
  const before = await shownVersion(page);
  await page.evaluate(() => {
    window.__refusalWatch?.disconnect();
    window.__refused = false;
    // Armed by a click on a button only: one that lands elsewhere (the page redrawn under the
    // pointer) answers nothing, and an old refusal drawn again after it must not count.
    let clicked = false;
    const arm = (e) => {
      if (!(e.target instanceof Element && e.target.closest("button"))) return;
      clicked = true;
      document.removeEventListener("click", arm, { capture: true });
    };
    document.addEventListener("click", arm, { capture: true });
    const isRefusal = (n) => n instanceof Element && (n.matches(".refusal") || n.querySelector(".refusal"));
    window.__refusalWatch = new MutationObserver((records) => {
      if (clicked && records.some((r) => [...r.addedNodes].some(isRefusal))) {
        window.__refused = true;
        window.__refusalWatch.disconnect();
      }
    });
    window.__refusalWatch.observe(document.body, { childList: true, subtree: true });
  });
  await target.click();
  await page.waitForFunction(
    (v) => Number(document.querySelector(".table-view")?.getAttribute("data-version")) > v || window.__refused,
    before,
    { timeout: TIMEOUT },
  );
}

/** One turn: the candidates a person could click (tile buttons and choice buttons), `choose`
 * picks one; returns what was clicked. */
export async function takeTurn(page, choose) {
  const tiles = page.getByRole("region", { name: "your hand" }).getByRole("button");
  const choices = page.getByRole("region", { name: "your choices" }).getByRole("button");
  const candidates = [];
  for (const t of await tiles.all()) candidates.push({ kind: "tile", label: await t.getAttribute("aria-label"), locator: t });
  for (const c of await choices.all()) candidates.push({ kind: "choice", label: (await c.textContent()) ?? "", locator: c });
  check(candidates.length, "my turn, but nothing to click");
  const pick = choose(candidates);
  await clickAndWait(page, pick.locator);
  return pick.label;
}

export function pickRandom(rng) {
  return (candidates) => candidates[Math.floor(rng() * candidates.length)];
}

/** The line of "what happened" that says how hand `hand` ended (the first after its deal that
 * matches `pattern`), once it is there: the log follows the game's stream, which may run behind
 * the table (a view the stream has not reached is shown after a grace anyway). */
export async function handResult(page, hand, pattern) {
  try {
    const found = await page.waitForFunction(
      ([n, source, flags]) => {
        const lines = [...document.querySelectorAll(".log li")].map((li) => li.textContent ?? "");
        const dealt = lines.findIndex((line) => line.startsWith(`Hand ${n} dealt`));
        const result = new RegExp(source, flags);
        return dealt >= 0 && (lines.slice(dealt).find((line) => result.test(line)) ?? false);
      },
      [hand, pattern.source, pattern.flags],
      { timeout: TIMEOUT },
    );
    return await found.jsonValue();
  } catch (error) {
    const log = await page.locator(".log li").allTextContents();
    fail(`no line ${pattern} after hand ${hand}'s deal in the log (${error.message.split("\n")[0]}): ${log.slice(-8)}`);
  }
}

/** The scores as the scoreboard shows them, by team (numbers). */
export async function shownScores(page) {
  const cells = await page.getByRole("table", { name: "scores" }).locator("td.score").allTextContents();
  return cells.map((c) => Number.parseInt(c, 10));
}

/** Run `main` and exit 0, or print the error and exit 1. */
export async function run(main) {
  let browser;
  try {
    browser = await launch();
    await main(browser);
    await browser.close();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`FAILED: ${error?.stack ?? error}\n`);
    await browser?.close().catch(() => {});
    process.exit(1);
  }
}

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** axe-core's serious and critical findings on the page as it is (the page's own state, any
 * width): a list of "rule: target" strings, empty when there are none. */
export async function axeFindings(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations);
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")}: ${v.help}`));
}

/** Whether the page scrolls sideways (wider than the window). */
export async function scrollsSideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
}

/** The page checked as a person on `screen` gets it: no sideways scroll, and no serious or
 * critical finding of axe; `checked` collects what was seen, by name. */
export async function checkPage(page, name, checked) {
  const sideways = await scrollsSideways(page);
  const width = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  const findings = await axeFindings(page);
  checked[name] = { sideways, width, findings };
  check(!sideways, `${name} scrolls sideways: ${width}`);
  check(!findings.length, `${name}: axe finds\n${findings.join("\n")}`);
}

/** Controls smaller than 44 x 44 px among `selector` (what a finger taps). */
export async function smallTargets(page, selector) {
  return page.evaluate((sel) => [...document.querySelectorAll(sel)]
    .filter((e) => e.offsetParent !== null)
    .map((e) => [e.getAttribute("aria-label") || e.textContent?.trim() || e.tagName, e.getBoundingClientRect()])
    .filter(([, r]) => r.width < 43.5 || r.height < 43.5)
    .map(([n, r]) => `${n} ${Math.round(r.width)}x${Math.round(r.height)}`), selector);
}

/** The seat token the page keeps for `gameId` (localStorage). */
export async function seatToken(page, gameId) {
  return page.evaluate((id) => JSON.parse(localStorage.getItem(`boneyard.seat.${id}`) ?? "{}").token, gameId);
}

/** Resign the seat of `token` from another client, at the version the game is at (house bots
 * may act meanwhile): a script's game with house bots ends, and stops counting against the
 * server's limit of such games in play for one address. A game already over is left as it is. */
export async function resign(gameId, token) {
  for (;;) {
    const { view } = await call("GameService", "GetView", { gameId }, token);
    if (view.phase === "PHASE_GAME_OVER") return;
    try {
      await call("GameService", "SubmitAction", {
        gameId, expectedVersion: view.version, requestId: crypto.randomUUID(), action: { resign: {} },
      }, token);
      return;
    } catch (error) {
      if (!String(error.message).includes("aborted")) throw error;
    }
  }
}
