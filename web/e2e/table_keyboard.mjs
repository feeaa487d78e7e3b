// The table by the keyboard alone, and as a screen reader hears it: a person takes seat 0 of a
// Texas 42 game with three house bots by Tab and Enter (name, Take seat), then bids and plays a
// tile the same way, each control showing its focus ring; only legal tiles and choices take
// the focus. Another player's hand is one picture ("7 tiles, face down"), not seven; the
// live region says the events and whose turn it is.

import {
  call, check, checkPage, newPage, report, resign, run, seatToken, shot, TIMEOUT, URL,
} from "./lib.mjs";

/** In the page: note each thing the live region says. */
function noteAnnouncements() {
  window.__said = [];
  const watch = () => {
    const region = document.getElementById("announce");
    if (!region) return false;
    new MutationObserver(() => window.__said.push(region.textContent ?? "")).observe(region, { childList: true, characterData: true, subtree: true });
    return true;
  };
  if (!watch()) {
    const wait = new MutationObserver(() => { if (watch()) wait.disconnect(); });
    wait.observe(document, { childList: true, subtree: true });
  }
}

/** What has the focus: its tag, classes, text or label, and whether its ring shows. */
async function focused(page) {
  return page.evaluate(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    const style = getComputedStyle(e);
    return {
      tag: e.tagName.toLowerCase(),
      cls: e.className && typeof e.className === "string" ? e.className : "",
      id: e.id,
      name: e.getAttribute("aria-label") || e.textContent?.trim() || "",
      disabled: !!e.disabled,
      ring: e.matches(":focus-visible") && style.outlineStyle !== "none" && Number.parseFloat(style.outlineWidth) >= 2,
      tile: e.closest(".hand") ? e.dataset.tile ?? null : null,
    };
  });
}

/** Press Tab until `wanted` (a test of `focused`) holds; every stop on the way is kept. */
async function tabTo(page, wanted, stops, most = 60) {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press("Tab");
    const now = await focused(page);
    if (now) stops.push(now);
    if (now && wanted(now)) return now;
  }
  return null;
}

/** Wait for this seat's turn with something to press, the hand's result (Continue, pressed
 * from the keyboard too), or the game's end. */
async function waitTurnByKeys(page, stops) {
  for (;;) {
    const state = await page.waitForFunction(() => {
      if (document.querySelector(".turn-line.over")) return "over";
      if (document.querySelector(".hand-summary button")) return "summary";
      const ready = document.querySelector(".hand button.tile, .choices button:not([disabled])");
      return document.querySelector(".turn-line.yours") && ready ? "turn" : false;
    }, null, { timeout: TIMEOUT }).then((h) => h.jsonValue());
    if (state !== "summary") return state;
    check(await tabTo(page, (f) => f.name === "Continue", stops), "Tab never reaches Continue");
    await page.keyboard.press("Enter");
    await page.locator(".hand-summary button").waitFor({ state: "detached" });
  }
}

async function shownVersion(page) {
  return Number(await page.locator(".table-view").getAttribute("data-version"));
}

run(async (browser) => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 800 } });
  await page.addInitScript(noteAnnouncements);
  const { gameId } = await call("GameService", "CreateGame", {
    rules: { preset: "texas42" },
    name: "by the keyboard",
    houseBots: [1, 2, 3].map((seat) => ({ seat, strategy: "heuristic" })),
  });
  await page.goto(`${URL}/#/game/${gameId}`);
  await page.getByRole("heading", { name: "Waiting for players" }).waitFor();
  const stops = [];

  // The seat, by the keyboard: the name field, then Take seat 0.
  check(await tabTo(page, (f) => f.id === "player-name", stops), "Tab never reaches the name field");
  await page.keyboard.type("kay");
  check(await tabTo(page, (f) => f.name === "Take seat 0", stops), "Tab never reaches Take seat 0");
  await page.keyboard.press("Enter");
  await page.locator(".table-view").waitFor();

  // A bid (or a pass), by Tab and Enter.
  let bid = null;
  let play = null;
  let trump = null;
  let turns = 0;
  while (!play && turns < 20) {
    const state = await waitTurnByKeys(page, stops);
    if (state !== "turn") break;
    turns++;
    const tiles = await page.locator(".hand button.tile").count();
    const phase = await page.locator(".table-view").getAttribute("data-phase");
    const before = await shownVersion(page);
    // From the top of the page, as a person who just arrived would.
    await page.locator("nav.top a").first().focus();
    if (tiles) {
      const legal = await page.locator(".hand button.tile").evaluateAll((bs) => bs.map((b) => b.dataset.tile));
      const reached = await tabTo(page, (f) => f.tile !== null, stops);
      check(reached, "Tab never reaches a legal tile");
      check(reached.ring, `no focus ring on the tile ${reached.name}`);
      check(legal.includes(reached.tile), `the focus is on ${reached.tile}, not a legal tile (${legal})`);
      await shot(page, "keyboard-tile-desktop");
      // Watch for the tile in seat 0's place of the trick from before Enter: on a busy machine
      // the bots may finish the trick, and the page gather it, before this script looks.
      await page.evaluate((tile) => {
        const seen = () => document.querySelector(`.felt .played[data-seat="0"] [data-tile="${tile}"]`);
        window.__tileInTrick = 0;
        const observer = new MutationObserver(() => {
          if (seen()) {
            window.__tileInTrick = 1;
            observer.disconnect();
          }
        });
        observer.observe(document.body, { childList: true, subtree: true, attributes: true });
      }, reached.tile);
      await page.keyboard.press("Enter");
      await page.waitForFunction((v) => Number(document.querySelector(".table-view")?.dataset.version) > v, before);
      const inTrick = await page
        .waitForFunction(() => window.__tileInTrick === 1, null, { timeout: TIMEOUT })
        .then(() => 1, () => 0);
      play = { tile: reached.tile, inTrick, ring: reached.ring };
    } else {
      const reached = await tabTo(page, (f) => f.cls.includes("choice") && !f.disabled, stops);
      check(reached, "Tab never reaches a choice");
      check(reached.ring, `no focus ring on ${reached.name}`);
      if (!bid) await shot(page, "keyboard-bid-desktop");
      await page.keyboard.press("Enter");
      await page.waitForFunction((v) => Number(document.querySelector(".table-view")?.dataset.version) > v, before);
      if (phase === "bidding" && !bid) bid = { choice: reached.name, ring: reached.ring };
      else if (phase === "naming trump") trump = reached.name;
    }
  }
  check(bid && play, `no bid (${JSON.stringify(bid)}) or no play (${JSON.stringify(play)}) by the keyboard`);
  await checkPage(page, "table by the keyboard", {});

  // Another player's hand is one picture to a screen reader, the trick's tiles each a picture
  // named as a player reads it.
  const hands = {};
  for (const seat of [1, 2, 3]) {
    const pictures = await page.getByRole("region", { name: `seat ${seat}`, exact: true }).getByRole("img").evaluateAll((is) => is.map((i) => i.getAttribute("aria-label")));
    hands[seat] = pictures;
  }
  const focusable = await page.evaluate(() => [...document.querySelectorAll(".hand .tile")].map((t) => ({ tile: t.dataset.tile, button: t.tagName === "BUTTON", tabbable: t.tabIndex >= 0 && t.tagName === "BUTTON" })));
  const said = await page.evaluate(() => window.__said);
  // Every stop of Tab on a tile was on a legal one (illegal tiles are pictures, not buttons).
  const tileStops = stops.filter((s) => s.tile !== null).map((s) => s.tile);
  await resign(gameId, await seatToken(page, gameId));
  report({ gameId, bid, trump, play, hands, focusable, said, tileStops, ringless: stops.filter((s) => !s.ring).map((s) => s.name) });
});
