// A person plays a whole Texas 42 game in the browser against three of the server's house bots:
// creates it in the lobby (seat 0, the other seats for heuristic bots, so it starts at once),
// then clicks one of the legal tiles or buttons on every turn, each time checking that exactly
// the legal ones can be clicked. On the way: a second browser acts for the same seat while this
// page's stream is cut, so this page's click is refused and it shows the server's reason, then
// resumes its stream from the last version it had; and a reload resumes the seat from the token
// in localStorage.

import {
  check, checkOnlyLegalClickable, checkPage, clickable, createGame, newPage, pickRandom, random, report, run,
  shot, shownScores, shownVersion, statusLine, takeTurn, TIMEOUT, URL, waitTurn, WATCH,
} from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  const rng = random();
  // Every page on the way: no sideways scroll, nothing serious or critical for axe.
  const pages = {};
  const bots = { 1: "heuristic", 2: "heuristic", 3: "heuristic" };
  const gameId = await createGame(page, { preset: "texas42", name: "browser game", seat: "0", playerName: "alice", houseBots: bots });
  // Every seat is taken (alice's and the bots'), so the lobby lists the game in play.
  await page.goto(`${URL}/#/`);
  const listed = page.getByRole("region", { name: "games in play" }).locator(`li[data-game="${gameId}"]`);
  await listed.waitFor();
  const line = (await listed.textContent()) ?? "";
  check(line.includes("4/4 seated") && line.includes("alice") && line.includes("heuristic bot"), `the lobby lists: ${line}`);
  await checkPage(page, "lobby", pages);
  await page.goto(`${URL}/#/game/${gameId}`);
  await waitTurn(page);
  const notes = await page.locator(".seat-name small").allTextContents();
  check(notes.filter((n) => n.includes("(house bot)")).length === 3, `the table's seats say: ${notes}`);

  let acted = 0;
  let checked = 0;
  let turns = 0;
  let refusal = "";
  let resumed = false;
  let reloaded = false;
  const hands = new Set();
  for (;;) {
    const state = await waitTurn(page);
    if (state === "over") break;
    turns++;
    hands.add((await page.locator(".table-view .contract").textContent()).split(" · ")[0]);
    if (await checkOnlyLegalClickable(page, gameId)) checked++;
    if (turns === 1) {
      await shot(page, "texas42-first-turn");
      await checkPage(page, "table", pages);
    }

    if (turns === 3) {
      // Cut this page's stream and reload it: it shows the table at version v, live updates
      // fail. Another browser with the same seat acts first; this page's click is stale.
      await page.route(WATCH, (route) => route.abort());
      await page.reload();
      await waitTurn(page);
      const stale = await shownVersion(page);
      const other = await newPage(browser, { storageState: await page.context().storageState() });
      await other.goto(`${URL}/#/game/${gameId}`);
      check((await waitTurn(other)) === "turn", "the second browser does not see the seat's turn");
      check((await shownVersion(other)) === stale, "the two pages disagree on the version");
      await takeTurn(other, pickRandom(rng));
      acted++;
      await page.getByText("reconnecting").waitFor();
      check((await shownVersion(page)) === stale, "the cut page moved on without its stream");
      // This page still offers its choices from version v: the server refuses the click.
      const { tiles, choices } = await clickable(page);
      const target = tiles.length
        ? page.getByRole("region", { name: "your hand" }).getByRole("button").first()
        : page.getByRole("region", { name: "your choices" }).getByRole("button").first();
      check(tiles.length + choices.length > 0, "nothing to click on the stale page");
      await target.click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      refusal = (await alert.textContent()) ?? "";
      check(refusal.includes("Someone acted first") && refusal.includes("version"), `unexpected refusal: ${refusal}`);
      await shot(page, "texas42-refused");
      await checkPage(page, "refused", pages);
      // The stream comes back: the page resumes from its last version and catches up.
      await page.unroute(WATCH);
      await page.locator(".connection.live").waitFor();
      const caughtUp = await other.evaluate(() => Number(document.querySelector(".table-view").dataset.version));
      // (Or the result of a hand that ended meanwhile, shown over the table as it ended.)
      await page.waitForFunction(
        (v) => Number(document.querySelector(".table-view")?.dataset.version) >= v || document.querySelector(".hand-summary button"),
        caughtUp,
        { timeout: TIMEOUT },
      );
      resumed = true;
      await other.context().close();
      continue;
    }
    if (turns === 5) {
      // The lobby lists the game in play, and its link leads back to the seat.
      await page.goto(`${URL}/#/`);
      const playing = page.getByRole("region", { name: "games in play" }).locator(`li[data-game="${gameId}"]`);
      await playing.getByRole("link", { name: "Play" }).click();
      check((await waitTurn(page)) === "turn", "the seat's turn is gone after the lobby");
    }
    if (turns === 8) {
      // A reload resumes the seat: the token is in localStorage.
      await page.reload();
      const after = await waitTurn(page);
      const meta = (await page.locator(".game-head .meta").textContent()) ?? "";
      check(meta.includes("you play seat 0"), `after the reload the page says: ${meta}`);
      check(await page.getByRole("region", { name: "your hand" }).count(), "no hand after the reload");
      reloaded = true;
      if (after === "over") break;
    }
    await takeTurn(page, pickRandom(rng));
    acted++;
  }
  const final = await statusLine(page);
  await shot(page, "texas42-game-over");
  await checkPage(page, "game over", pages);
  report({
    gameId,
    acted,
    turns,
    checked,
    hands: hands.size,
    refusal,
    resumed,
    reloaded,
    final,
    scores: await shownScores(page),
    version: await shownVersion(page),
    pages,
  });
});
