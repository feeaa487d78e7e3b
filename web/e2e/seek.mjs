// Seeking a table in the browser, on the screen SCREEN names: a signed-in player seeks a Moon
// table and the page says "1 of 3 players waiting"; Cancel stops it ("You stopped seeking"),
// so that a second seek is again the only one waiting. The script then says "seeking", and the
// test starts two bot accounts seeking the same table (`boneyard bot --key K --seek moon`):
// the server forms the table and the page goes to it, the player seated with the key. The
// player resigns. Then the operator revokes the key: the page signs out and says why. The
// seeking page is checked for sideways scrolling, tap targets and by axe-core.
//
// Environment: ME and ME_KEY (the player's account).

import { check, checkPage, newPage, report, run, say, SCREENS, shot, smallTargets, URL } from "./lib.mjs";
import { trySignIn } from "./account_lib.mjs";

const screen = process.env.SCREEN ?? "desktop";
const ME_KEY = process.env.ME_KEY;

/** The seek's line once it says the player alone waits. (A seek made right after a cancelled
 * one may first be told "2 of 3": the server drops the cancelled seek when it sees the stream
 * gone, a moment later, and then says "1 of 3".) */
async function waiting(page) {
  const status = page.locator(".seek-status");
  await status.filter({ hasText: " 1 of 3 players waiting" }).waitFor();
  return (await status.textContent()) ?? "";
}

run(async (browser) => {
  const options = SCREENS[screen];
  check(options, `no screen ${screen}`);
  check(ME_KEY, "ME_KEY");
  const page = await newPage(browser, options);
  const seen = {};
  await page.goto(`${URL}/#/challenges`);
  // The page asks to sign in first, then shows itself.
  check((await trySignIn(page, ME_KEY)) === "", "the player's key was refused");
  const seek = page.getByRole("form", { name: "seek a table" });
  await seek.waitFor();
  await page.locator("header .connection.live").waitFor();
  await seek.getByLabel("Game").selectOption("moon");
  await seek.getByRole("button", { name: "Seek" }).click();
  const first = await waiting(page);
  await checkPage(page, "seeking", seen);
  const small = await smallTargets(page, "button, nav a, select, input:not([type=checkbox])");
  check(!small.length, `too small to tap while seeking: ${small}`);
  await shot(page, `seeking-${screen}`);
  await page.getByRole("button", { name: "Cancel" }).click();
  await page.locator(".seek-note").filter({ hasText: "You stopped seeking." }).waitFor();
  const cancelled = (await page.locator(".seek-note").textContent()) ?? "";

  await seek.getByLabel("Game").selectOption("moon");
  await seek.getByRole("button", { name: "Seek" }).click();
  const again = await waiting(page);
  say("seeking");
  await page.waitForURL(/#\/game\//);
  const gameId = decodeURIComponent(/#\/game\/([^/]+)/.exec(page.url())[1]);
  await page.locator(".table-view").waitFor();
  const seated = (await page.locator(".game-head .meta").textContent()) ?? "";
  check(/you play seat \d/.test(seated), `not seated at the table the seek formed: ${seated}`);
  await page.getByRole("button", { name: "Resign" }).click();
  await page.getByRole("button", { name: "Yes, resign" }).click();
  const final = (await page.locator(".turn-line.over").textContent()) ?? "";

  // The operator revokes the key (the test does, on this line) while the page is on the
  // leaderboard, which sends no key; once the server refuses it (asked here, as another
  // client), the page that uses it next signs the browser out and says why.
  await page.goto(`${URL}/#/leaderboard`);
  say("revoke");
  for (;;) {
    const answer = await fetch(`${URL}/boneyard.v1.AccountService/GetAccount`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ME_KEY}` },
      body: "{}",
    });
    await answer.text();
    if (answer.status === 401) break;
    check(answer.ok, `GetAccount answered ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await page.goto(`${URL}/#/me`);
  const revoked = (await page.locator(".sign-in .refusal:not([hidden])").textContent()) ?? "";
  const navAfter = (await page.locator("nav.top .account-link").textContent()) ?? "";
  const keyKept = await page.evaluate((k) => Object.keys(localStorage).some((key) => localStorage.getItem(key).includes(k)), ME_KEY);
  report({ screen, first, cancelled, again, gameId, seated, final, revoked, navAfter, keyKept, checked: seen });
});
