// The table's motion, on the screen SCREEN names: a person takes seat 0 of a Texas 42 game
// with three house bots and plays tiles; each tile played glides to the trick (the person's
// from their hand, a bot's from its seat), a trick that is over is gathered toward its winner,
// and a trick the bots finished while the person was not looking stays whole in the middle for
// a moment, while everything else on the table (whose turn, the legal tiles) is already the
// view as it is. Then the same with prefers-reduced-motion: reduce: nothing moves.
//
// The page's Element.animate is wrapped to note each motion (what moved, from where), so that
// nothing here depends on speed; for the screenshots, the motion is paused halfway.

import {
  call, check, checkOnlyLegalClickable, checkPage, clickAndWait, newPage, report, resign, run, SCREENS, seatToken, shot, URL,
  waitTurn,
} from "./lib.mjs";

const screen = process.env.SCREEN ?? "desktop";
/** table.ts's TRICK_HOLD_MS, less a little for the clock's grain. */
const HOLD_MS = 1100 - 20;

/** In the page, before its script: note every Element.animate (the tile that moved and its
 * first keyframe's translate), and pause every motion when window.__freeze names the kind
 * that has just started ("glide" of seat 0's tile, or "gather"). */
function notingMotion() {
  window.__motion = [];
  window.__frozen = "";
  const animate = Element.prototype.animate;
  Element.prototype.animate = function (keyframes, options) {
    const motion = animate.call(this, keyframes, options);
    const played = this.closest?.(".played");
    const kind = this.classList.contains("gathering") ? "gather" : played ? "glide" : this.closest?.(".hand") ? "close-up" : "other";
    // Where a glide starts from, where a gathered tile goes.
    const frame = kind === "gather" ? keyframes.at(-1) : keyframes[0];
    const move = /translate\((-?[\d.]+)px, (-?[\d.]+)px\)/.exec(frame?.transform ?? "");
    window.__motion.push({
      kind,
      seat: played?.dataset.seat ?? this.dataset.to,
      tile: this.dataset.tile,
      dx: move ? Number(move[1]) : 0,
      dy: move ? Number(move[2]) : 0,
      delay: options?.delay ?? 0,
      duration: options?.duration,
    });
    const freeze = window.__freeze;
    if (freeze && (freeze === kind) && (kind === "gather" || played?.dataset.seat === "0")) {
      window.__freeze = "";
      queueMicrotask(() => {
        for (const a of document.getAnimations()) {
          a.pause();
          a.currentTime = (a.effect?.getComputedTiming().delay ?? 0) + (Number(a.effect?.getComputedTiming().duration) || 0) * 0.45;
        }
        window.__frozen = kind;
      });
    }
    return motion;
  };
}

/** In the page: note when each trick (deal:index) is first drawn whole, when it goes, and
 * whether it was held (kept while the next trick had begun). */
function notingTricks() {
  window.__tricks = {};
  const look = () => {
    const now = performance.now();
    const deal = document.querySelector(".table-view")?.dataset.deal;
    const shown = new Set();
    for (const t of document.querySelectorAll(".trick.done[data-trick]")) {
      const key = `${deal}:${t.dataset.trick}`;
      shown.add(key);
      const seen = (window.__tricks[key] ??= { from: now, held: false, summary: false });
      seen.held ||= t.classList.contains("held");
    }
    for (const [key, seen] of Object.entries(window.__tricks)) {
      if (seen.to === undefined && !shown.has(key)) {
        seen.to = now;
        seen.summary = !!document.querySelector(".hand-summary") || !key.startsWith(`${deal}:`);
      }
    }
  };
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
  look();
}

async function newGame(name) {
  const { gameId } = await call("GameService", "CreateGame", {
    rules: { preset: "texas42" },
    name,
    houseBots: [1, 2, 3].map((seat) => ({ seat, strategy: "heuristic" })),
  });
  return gameId;
}

async function takeSeat(page, gameId, name) {
  await page.goto(`${URL}/#/game/${gameId}`);
  await page.getByLabel("Your name").fill(name);
  await page.getByRole("button", { name: "Take seat 0" }).click();
  await page.locator(".table-view").waitFor();
}

/** Take a screenshot of the motion paused halfway (`kind` has just started), then resume it.
 * A motion that began before it was asked to pause (the machine was slow to ask) has no
 * screenshot: undefined. */
async function frozenShot(page, kind, name) {
  const frozen = await page.waitForFunction((k) => window.__frozen === k, kind, { timeout: 5000 }).then(() => true, () => false);
  const path = frozen ? await shot(page, name) : undefined;
  await page.evaluate(() => {
    window.__freeze = "";
    window.__frozen = "";
    for (const a of document.getAnimations()) a.play();
  });
  return path;
}

/** Play tiles (the first legal one; bids and trump by the first choice) until `plays` tiles are
 * played or the game is over; `before` is told before each tile is clicked, `after` after. */
async function play(page, plays, before = async () => {}, after = async () => {}) {
  let played = 0;
  while (played < plays) {
    const state = await waitTurn(page);
    if (state !== "turn") break;
    const tiles = page.getByRole("region", { name: "your hand" }).getByRole("button");
    if (!(await tiles.count())) {
      const choices = page.getByRole("region", { name: "your choices" }).getByRole("button");
      if (!(await choices.count())) {
        // The table redrew between the two looks (a busy machine): look again.
        await page.waitForTimeout(50);
        continue;
      }
      await clickAndWait(page, choices.first());
      continue;
    }
    await before(played);
    const tile = tiles.first();
    const name = await tile.getAttribute("aria-label");
    await clickAndWait(page, tile);
    await after(played, name);
    played++;
  }
  return played;
}

run(async (browser) => {
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  const page = await newPage(browser, options);
  await page.addInitScript(notingMotion);
  const gameId = await newGame(`motion (${screen})`);
  await takeSeat(page, gameId, "mo");
  await page.evaluate(notingTricks);

  const checked = {};
  const shots = {};
  let heldAtTurn = 0;
  let legalWhileHeld = 0;
  let glided = 0;
  await play(
    page,
    12,
    async () => {
      if (await page.locator(".trick.held").count()) {
        // The bots' trick is held in the middle, and the table is the view as it is: the
        // seat's turn, and exactly the legal tiles to click.
        heldAtTurn++;
        const first = !shots.held;
        if (first) await page.evaluate(() => { window.__freeze = "gather"; });
        if (await checkOnlyLegalClickable(page, gameId)) legalWhileHeld++;
        if (first) {
          shots.held = await shot(page, `trick-held-${screen}`);
          await checkPage(page, "table with a held trick", checked);
        }
        // The hold runs its course (it is measured), and the trick is gathered.
        await page.locator(".trick.held").waitFor({ state: "detached" });
        if (first) shots.gather = await frozenShot(page, "gather", `motion-gather-${screen}`);
      }
      if (!shots.glide) await page.evaluate(() => { window.__freeze = "glide"; });
    },
    async (n, name) => {
      if (!shots.glide) shots.glide = await frozenShot(page, "glide", `motion-glide-${screen}`);
      // The tile glided from the hand to the trick.
      const from = await page.evaluate((t) => window.__motion.some((m) => m.kind === "glide" && m.seat === "0" && m.tile === t), name);
      if (from) glided++;
    },
  );

  const motion = await page.evaluate(() => window.__motion);
  const tricks = await page.evaluate(() => window.__tricks);
  const mine = motion.filter((m) => m.kind === "glide" && m.seat === "0" && m.duration >= 200);
  const bots = motion.filter((m) => m.kind === "glide" && m.seat !== "0" && m.duration >= 200);
  const gathers = motion.filter((m) => m.kind === "gather");
  const held = Object.values(tricks).filter((t) => t.held && t.to !== undefined && !t.summary);

  // The same person, their system asking for less motion: nothing moves.
  const calm = await newPage(browser, { ...options, reducedMotion: "reduce" });
  await calm.addInitScript(notingMotion);
  const calmGame = await newGame(`calm (${screen})`);
  await takeSeat(calm, calmGame, "calm");
  const calmPlays = await play(calm, 4);
  const calmMotion = await calm.evaluate(() => window.__motion.length);
  // (Both games end: games with house bots left in play count against the server's limit.)
  await resign(calmGame, await seatToken(calm, calmGame));
  await resign(gameId, await seatToken(page, gameId));
  await calm.context().close();

  report({
    gameId,
    screen,
    mine: mine.map(({ dx, dy }) => ({ dx, dy })),
    bots: bots.map(({ seat, dx, dy }) => ({ seat: Number(seat), dx, dy })),
    gathers: gathers.map(({ seat, dx, dy }) => ({ seat: Number(seat), dx, dy })),
    held: held.map((t) => Math.round(t.to - t.from)),
    holdMs: HOLD_MS,
    heldAtTurn,
    legalWhileHeld,
    glided,
    shots,
    calm: { plays: calmPlays, motion: calmMotion },
    checked: Object.fromEntries(Object.entries(checked).map(([k, v]) => [k, v.findings.length + (v.sideways ? 1 : 0)])),
  });
});
