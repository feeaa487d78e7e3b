// A hand's result is shown even when the page is brought past the hand's end by a refused
// click: the page's stream is refused for good (as for a token the server no longer takes for
// watching), another client holding the same seat plays it to the end of the hand and on to
// its next turn, and then the person clicks on the page, which still shows the first hand. The
// server refuses the click (someone acted first) and the page fetches the view again: it must
// say the hand's result before it shows the next hand, then Continue leads to the next hand's
// turn. Deterministic: the stream that would otherwise bring the result never comes.

import { call, check, checkPage, fail, newPage, report, resign, run, seatToken, shot, TIMEOUT, URL, waitTurn, WATCH } from "./lib.mjs";

/** The seat's view as the other client sees it. */
async function view(gameId, token) {
  return (await call("GameService", "GetView", { gameId }, token)).view;
}

/** Another client plays the seat (the first legal action each turn) until the hand numbered
 * `hand` is scored and the seat's turn has come again (or the game is over). */
async function playElsewhere(gameId, token, hand) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    check(Date.now() < deadline, `the other client did not get past hand ${hand}`);
    const v = await view(gameId, token);
    const mine = v.turn !== undefined && v.turn === v.seat;
    if (v.phase === "PHASE_GAME_OVER") return v;
    if ((v.handNumber ?? 0) > hand && mine) return v;
    if (mine && v.legalActions?.length) {
      await call("GameService", "SubmitAction", { gameId, expectedVersion: v.version, requestId: crypto.randomUUID(), action: v.legalActions[0] }, token);
    } else {
      // The house bots' turn: ask again in a moment (a hang guard bounds the wait).
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

run(async (browser) => {
  const page = await newPage(browser);
  const { gameId } = await call("GameService", "CreateGame", {
    rules: { preset: "texas42" },
    name: "raced",
    houseBots: [1, 2, 3].map((seat) => ({ seat, strategy: "heuristic" })),
  });
  await page.goto(`${URL}/#/game/${gameId}`);
  await page.getByLabel("Your name").fill("rae");
  await page.getByRole("button", { name: "Take seat 0" }).click();
  check((await waitTurn(page)) === "turn", "no first turn for seat 0");
  const token = await seatToken(page, gameId);

  // From now on the page hears nothing of the game: its stream is refused for good.
  await page.route(WATCH, (route) => route.fulfill({ status: 403, contentType: "text/plain", body: "no" }));
  await page.reload();
  await page.locator(".connection.stopped").waitFor();
  check((await waitTurn(page)) === "turn", "the refused page lost the seat's turn");
  const hand = Number(/^Hand (\d+)/.exec((await page.locator(".table-view .contract").textContent()) ?? "")?.[1]);

  // The other client plays the seat through the end of that hand, to its next turn.
  const after = await playElsewhere(gameId, token, hand);
  const scored = after.results[after.results.length - 1];

  // The page notes what it draws from now on: the hand shown, and whether a result is up.
  await page.evaluate(() => {
    window.__drawn = [];
    new MutationObserver(() => {
      const line = document.querySelector(".table-view .contract")?.textContent ?? "";
      const summary = document.querySelector(".hand-summary h2")?.textContent ?? "";
      const last = window.__drawn.at(-1);
      if (!last || last.line !== line || last.summary !== summary) window.__drawn.push({ line, summary });
    }).observe(document.getElementById("app"), { childList: true, subtree: true });
  });
  // The person clicks on the stale page: the server refuses, the page looks again.
  const stale = page.locator(".choices button:not([disabled]), .hand button.tile").first();
  await stale.click();
  // The alert said the stream's refusal before the click: wait for the click's own answer.
  const refused = page.getByRole("alert").filter({ hasText: "Someone acted first" }).first();
  await refused.waitFor({ timeout: TIMEOUT }).catch(async () => {
    const alerts = await page.getByRole("alert").allTextContents();
    fail(`the click was not refused as stale: ${alerts.join(" | ")}`);
  });
  const alert = (await refused.textContent()) ?? "";
  await page.locator(".hand-summary").waitFor();
  const headline = (await page.locator(".hand-summary h2").textContent()) ?? "";
  await checkPage(page, "result after a refused click", {});
  await shot(page, "hand-result-after-race");
  const drawn = await page.evaluate(() => window.__drawn);
  // No later hand was drawn before the result.
  const firstLater = drawn.findIndex((d) => Number(/^Hand (\d+)/.exec(d.line)?.[1]) > hand);
  const laterBeforeResult = firstLater >= 0 && !drawn[firstLater].summary;

  let next = "over";
  if (after.phase !== "PHASE_GAME_OVER") {
    await page.locator(".hand-summary").getByRole("button", { name: "Continue" }).click();
    await page.locator(".hand-summary").waitFor({ state: "detached" });
    next = (await page.locator(".table-view .contract").textContent()) ?? "";
    check(await page.locator(".turn-line.yours").count(), `no turn after Continue: ${next}`);
  }
  await resign(gameId, token);
  report({ gameId, hand, alert, headline, scored, laterBeforeResult, next });
});
