// The lobby is live: with the lobby open (on the screen SCREEN names), another client creates a
// game, and it appears under "Waiting for players" with no click; a seat taken by that client
// moves it under "In play", and its resignation takes it off the lobby. The first lobby stream
// is cut by the network: the page says it is reconnecting and opens it again by itself. The
// lobby is checked for sideways scrolling and by axe-core. Reports the time each change took
// to show (the issue asks for under 1 s; that is the machine's speed, reported, not asserted:
// a change that never shows fails after the scripts' hang guard, TIMEOUT).

import { call, check, checkPage, newPage, report, run, say, SCREENS, shot, TIMEOUT, URL, WATCH_LOBBY } from "./lib.mjs";

const screen = process.env.SCREEN ?? "desktop";

/** Run `change`, then wait until the game `id(result)` is where `where` says ("open games",
 * "games in play", or null: off the lobby); the milliseconds between. */
async function timed(page, what, change, id, where) {
  const start = Date.now();
  const result = await change();
  await page.waitForFunction(([game, list]) => {
    const shown = [...document.querySelectorAll(`li[data-game="${game}"]`)].map((li) => li.closest("section")?.getAttribute("aria-label"));
    return list === null ? shown.length === 0 : shown.length === 1 && shown[0] === list;
  }, [id(result), where], { timeout: TIMEOUT });
  const ms = Date.now() - start;
  say("measured", what, `${ms} ms`);
  return { ms, result };
}

run(async (browser) => {
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  const page = await newPage(browser, options);
  const checked = {};
  // The first lobby stream fails as a network error does; the page must open it again.
  let cut = 0;
  await page.route(WATCH_LOBBY, async (route) => {
    cut += 1;
    await route.abort("connectionfailed");
    await page.unroute(WATCH_LOBBY);
  });
  const states = [];
  await page.exposeFunction("__lobbyState", (s) => states.push(s));
  await page.addInitScript(() => {
    new MutationObserver(() => {
      const s = document.querySelector(".lobby-head .connection")?.getAttribute("data-connection");
      if (s && s !== window.__lastLobbyState) { window.__lastLobbyState = s; window.__lobbyState(s); }
    }).observe(document, { childList: true, subtree: true, attributes: true });
  });
  await page.goto(`${URL}/#/`);
  await page.locator(".lobby-head .connection.live").waitFor();
  await page.getByRole("form", { name: "new game" }).waitFor();
  await checkPage(page, "lobby", checked);

  const created = await timed(
    page,
    "created",
    () => call("GameService", "CreateGame", {
      rules: { preset: "texas42" },
      name: `made elsewhere (${screen})`,
      houseBots: [1, 2, 3].map((seat) => ({ seat, strategy: "heuristic" })),
    }),
    (r) => r.gameId,
    "open games",
  );
  const gameId = created.result.gameId;
  const line = (await page.locator(`section[aria-label="open games"] li[data-game="${gameId}"]`).textContent()) ?? "";
  await shot(page, `lobby-live-${screen}`);

  const seated = await timed(
    page,
    "seated",
    () => call("GameService", "TakeSeat", { gameId, seat: 0, playerName: "elsewhere" }),
    () => gameId,
    "games in play",
  );
  const playingLine = (await page.locator(`section[aria-label="games in play"] li[data-game="${gameId}"]`).textContent()) ?? "";

  const token = seated.result.seatToken;
  const finished = await timed(
    page,
    "finished",
    async () => {
      // Resign as seat 0, at the version the game is at (the house bots may act meanwhile).
      for (;;) {
        const { view } = await call("GameService", "GetView", { gameId }, token);
        try {
          return await call("GameService", "SubmitAction", {
            gameId, expectedVersion: view.version, requestId: crypto.randomUUID(), action: { resign: {} },
          }, token);
        } catch (error) {
          if (!String(error.message).includes("aborted")) throw error;
        }
      }
    },
    () => gameId,
    null,
  );
  await checkPage(page, "lobby after", checked);
  report({
    gameId,
    screen,
    cut,
    states,
    line,
    playingLine,
    ms: { created: created.ms, seated: seated.ms, finished: finished.ms },
    checked,
  });
});
