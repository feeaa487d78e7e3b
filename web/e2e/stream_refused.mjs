// The game's stream is refused for good (the server answers WatchGame 403, as for a seat whose
// token no longer holds it): the page says it is not following the game, beside the game's name
// and not only in the refusal, and still says so after a choice of the person's succeeds (which
// clears the refusal).

import {
  check, checkPage, createGame, newPage, pickRandom, random, report, resign, run, seatToken, takeTurn, waitTurn, WATCH,
} from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  const bots = { 1: "heuristic", 2: "heuristic", 3: "heuristic" };
  const gameId = await createGame(page, { preset: "texas42", name: "refused stream", seat: "0", houseBots: bots });
  await waitTurn(page);
  await page.route(WATCH, (route) => route.fulfill({ status: 403, contentType: "text/plain", body: "no" }));
  await page.reload();
  const meta = page.locator(".game-head .meta");
  await page.locator(".connection.stopped").waitFor();
  const stopped = (await meta.textContent()) ?? "";
  const alert = (await page.getByRole("alert").textContent()) ?? "";
  // The page that says so: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  await checkPage(page, "not following", checked);
  check((await waitTurn(page)) === "turn", "no turn to take on the refused page");
  await takeTurn(page, pickRandom(random()));
  const after = (await meta.textContent()) ?? "";
  const alerts = await page.getByRole("alert").count();
  // (The game ends: a game with house bots left in play counts against the server's limit.)
  await resign(gameId, await seatToken(page, gameId));
  report({ gameId, stopped, alert, after, alerts, checked });
});
