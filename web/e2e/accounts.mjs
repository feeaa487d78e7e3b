// A player's account in the browser, on the screen SCREEN names: signing in is refused with a
// clear word for text that is no key, an unknown key and a revoked one; with the account's key
// the page shows the account's name, and the key is nowhere on the page. With "your page" open
// in one tab (never reloaded), another tab answers challenges from a bot's account as they
// arrive (one declined; one accepted, which takes the person to the table in their seat, where
// they resign), then sends a rated Texas 42 challenge (one hand) to three bot accounts from the
// form; the bots (processes run by the test, `boneyard bot --key K --accept texas42`) accept,
// the page goes to the table seated, and the person plays the hand to its end. "Your page"
// shows the game and the rating change live; the leaderboard lists the four accounts, and a
// name leads to that account's page. Signing out forgets the key. Every page is checked for
// sideways scrolling, tap targets and by axe-core; screenshots of each.
//
// Environment: ME (the player's account) and ME_KEY, REVOKED_KEY (a revoked account's key),
// BOTS (the three bot accounts, by commas), CHALLENGER_KEY (the first bot's key: the script
// challenges the player with it, as another client would).

import {
  call, check, checkPage, newPage, pickRandom, random, report, run, SCREENS, shot, smallTargets, takeTurn, URL, waitTurn,
} from "./lib.mjs";
import { keyShown, trySignIn } from "./account_lib.mjs";

const screen = process.env.SCREEN ?? "desktop";
const ME = process.env.ME;
const ME_KEY = process.env.ME_KEY;
const REVOKED_KEY = process.env.REVOKED_KEY;
const BOTS = (process.env.BOTS ?? "").split(",");
const CHALLENGER_KEY = process.env.CHALLENGER_KEY;
const TAPPED = "button, nav a, select, input:not([type=checkbox]), .tabs a, label.check";

/** A bot's account challenges the player to a two-seat Texas 42 table, as another client. */
async function challengeFromBot() {
  const made = await call("ChallengeService", "CreateChallenge", {
    rules: { preset: "texas42", players: 2, handLimit: 1 },
    challenged: [{ account: ME }],
    challengerPlays: true,
  }, CHALLENGER_KEY);
  return made.challenge.challengeId;
}

async function checked(page, name, seen) {
  await checkPage(page, name, seen);
  const small = await smallTargets(page, TAPPED);
  check(!small.length, `too small to tap on ${name}: ${small}`);
}

run(async (browser) => {
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  check(ME && ME_KEY && REVOKED_KEY && BOTS.length === 3 && CHALLENGER_KEY, "ME, ME_KEY, REVOKED_KEY, BOTS, CHALLENGER_KEY");
  const seen = {};
  const me = await newPage(browser, options);

  // --- signing in ------------------------------------------------------------------------
  await me.goto(`${URL}/#/me`);
  await me.getByRole("form", { name: "sign in" }).waitFor();
  check((await me.locator("nav.top .account-link").textContent()) === "Sign in", "the nav does not offer to sign in");
  await checked(me, "sign in", seen);
  const refusals = {
    notAKey: await trySignIn(me, "my password"),
    unknown: await trySignIn(me, `byk_${"x".repeat(43)}`),
    revoked: await trySignIn(me, REVOKED_KEY),
  };
  await shot(me, `sign-in-refused-${screen}`);
  check(!(await keyShown(me, REVOKED_KEY)), "the revoked key can be read on the page");
  // The key pasted and Enter pressed, by the keyboard alone.
  await me.getByLabel("Your account's key").fill(ME_KEY);
  await me.getByLabel("Your account's key").press("Enter");
  await me.locator(".me-head h1").waitFor();
  const name = (await me.locator(".me-head h1").textContent()) ?? "";
  const navName = (await me.locator("nav.top .account-link").textContent()) ?? "";
  await me.locator(".activity .connection.live").waitFor();
  check(!(await keyShown(me, ME_KEY)), "the key can be read on the page after signing in");
  await checked(me, "your page", seen);

  // --- challenges received, answered in another tab ----------------------------------------
  const tab = await me.context().newPage();
  await tab.goto(`${URL}/#/challenges`);
  await tab.getByRole("form", { name: "challenge" }).waitFor();
  await tab.locator("header .connection.live").waitFor();
  await checked(tab, "challenges", seen);
  const declinedId = await challengeFromBot();
  const declined = tab.locator(`section[aria-label="received challenges"] li[data-challenge="${declinedId}"]`);
  await declined.waitFor(); // pushed by the account's stream: no click, no reload
  await shot(tab, `challenge-received-${screen}`);
  await declined.getByRole("button", { name: "Decline" }).click();
  await tab.locator(`li[data-challenge="${declinedId}"].declined`).waitFor({ state: "attached" });
  const declinedLine = (await declined.locator(".ch-status").textContent()) ?? "";

  const acceptedId = await challengeFromBot();
  const accepted = tab.locator(`section[aria-label="received challenges"] li[data-challenge="${acceptedId}"]`);
  // Accepted by the keyboard: the button focused, Enter pressed.
  await accepted.getByRole("button", { name: "Accept" }).focus();
  await tab.keyboard.press("Enter");
  await tab.waitForURL(/#\/game\//);
  const shortGame = decodeURIComponent(/#\/game\/([^/]+)/.exec(tab.url())[1]);
  await tab.locator(".table-view").waitFor();
  const seatedLine = (await tab.locator(".game-head .meta").textContent()) ?? "";
  check(/you play seat \d/.test(seatedLine), `not seated at the accepted challenge's table: ${seatedLine}`);
  await tab.getByRole("button", { name: "Resign" }).click();
  await tab.getByRole("button", { name: "Yes, resign" }).click();
  await tab.locator(".turn-line.over").waitFor();

  // --- a rated challenge sent from the form, played to its end ----------------------------
  await tab.goto(`${URL}/#/challenges`);
  const form = tab.getByRole("form", { name: "challenge" });
  await form.waitFor();
  await form.getByLabel("game", { exact: true }).selectOption("texas42");
  check((await form.getByLabel("your seat").inputValue()) === "0", "your seat is not seat 0 by default");
  // A rated table with a free seat is refused before it is sent, with the seats named.
  await form.getByLabel("seat 1").fill(BOTS[0]);
  await form.getByLabel(/^Rated/).check();
  await form.getByRole("button", { name: "Send the challenge" }).click();
  const ratedRefusal = (await form.locator(".refusal").textContent()) ?? "";
  await form.getByLabel("seat 2").fill(BOTS[1]);
  await form.getByLabel("seat 3").fill(BOTS[2]);
  await form.getByText("Options (unset: the preset's value)").click();
  await form.getByLabel("hand limit", { exact: true }).fill("1");
  await shot(tab, `challenge-form-${screen}`);
  await form.getByRole("button", { name: "Send the challenge" }).click();
  await tab.waitForURL(/#\/game\//, { timeout: 120000 });
  const ratedGame = decodeURIComponent(/#\/game\/([^/]+)/.exec(tab.url())[1]);
  await tab.locator(".table-view").waitFor();
  const ratedSeat = (await tab.locator(".game-head .meta").textContent()) ?? "";
  check(ratedSeat.includes("you play seat 0"), `not seated at the rated table: ${ratedSeat}`);
  const rng = random();
  let turns = 0;
  for (;;) {
    const state = await waitTurn(tab);
    if (state === "over") break;
    if (turns++ === 0) await checked(tab, "table", seen);
    await takeTurn(tab, pickRandom(rng));
  }
  const final = (await tab.locator(".turn-line.over").textContent()) ?? "";

  // --- your page, never reloaded, followed it all --------------------------------------------
  await me.bringToFront();
  const rated = me.locator(`.feed li[data-kind="gameRated"]`).filter({ hasText: ratedGame.slice(0, 8) });
  await rated.waitFor();
  const ratedLine = (await rated.textContent()) ?? "";
  const card = me.locator('.rating-card[data-game-type="Texas 42"]');
  await card.waitFor();
  const ratingShown = (await card.locator(".rating-value").textContent()) ?? "";
  const cardParts = (await card.locator(".rating-parts").textContent()) ?? "";
  const feed = await me.locator(".feed li").evaluateAll((lis) => lis.map((li) => li.dataset.kind));
  await me.getByRole("button", { name: /^Show \d+ earlier events?$/ }).click();
  const feedAll = await me.locator(".feed li").evaluateAll((lis) => lis.map((li) => li.dataset.kind));
  const startedLine = (await me.locator(".feed li", { hasText: "seat 0" }).filter({ hasText: "A seat at a new table" }).first().textContent()) ?? "";
  await checked(me, "your page after", seen);
  await shot(me, `account-${screen}`);

  // --- the leaderboard and an account's page ------------------------------------------------
  await tab.goto(`${URL}/#/leaderboard`);
  const board = tab.getByRole("table", { name: "Texas 42 leaderboard" });
  await board.waitFor();
  const rows = await board.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => ({
    account: tr.dataset.account,
    rank: tr.querySelector(".rank").textContent,
    rating: tr.querySelector(".rating").textContent,
    muSigma: tr.querySelector(".mu-sigma").textContent,
    games: tr.querySelector(".games").textContent,
    mine: tr.classList.contains("mine"),
  })));
  await checked(tab, "leaderboard", seen);
  await shot(tab, `leaderboard-${screen}`);
  await board.getByRole("link", { name: BOTS[1], exact: true }).click();
  await tab.waitForURL(/#\/player\//);
  const botCard = tab.locator('.rating-card[data-game-type="Texas 42"]');
  await botCard.waitFor();
  const botPage = {
    title: (await tab.locator("h1").textContent()) ?? "",
    rating: (await botCard.locator(".rating-value").textContent()) ?? "",
    history: await botCard.locator(".history li").count(),
  };
  await checked(tab, "an account's page", seen);
  await tab.getByRole("navigation", { name: "pages" }).getByRole("link", { name: "Leaderboard" }).click();
  await tab.getByRole("link", { name: "Moon" }).click();
  await tab.waitForURL(/#\/leaderboard\/moon/);
  await tab.getByText("No account has a Moon rating yet").waitFor();
  await checked(tab, "moon leaderboard", seen);
  await tab.close();

  // --- signing out forgets the key ----------------------------------------------------------
  await me.getByRole("button", { name: "Sign out" }).click();
  await me.getByRole("form", { name: "sign in" }).waitFor();
  const kept = await me.evaluate((k) => Object.keys(localStorage).filter((key) => localStorage.getItem(key).includes(k)), ME_KEY);
  const navAfter = (await me.locator("nav.top .account-link").textContent()) ?? "";

  report({
    screen, refusals, name, navName, declinedId, declinedLine, acceptedId, shortGame, seatedLine, ratedRefusal, ratedGame,
    final, ratedLine, ratingShown, cardParts, feed, feedAll, startedLine, rows, botPage, kept, navAfter, checked: seen,
  });
});
