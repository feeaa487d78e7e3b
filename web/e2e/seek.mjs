// Seeking a table in the browser, on the screen SCREEN names: a signed-in player seeks a Moon
// table and the page says "1 of 3 players waiting"; Cancel stops it ("You stopped seeking"),
// so that a second seek is again the only one waiting. The script then says "seeking", and the
// test starts two bot accounts seeking the same table (`boneyard bot --key K --seek moon`):
// the server forms the table and the page goes to it, the player seated with the key. The
// player resigns. Then the operator revokes the key: the page signs out and says why. The
// seeking page is checked for sideways scrolling, tap targets and by axe-core.
//
// Environment: ME and ME_KEY (the player's account).

import { check, checkPage, newPage, report, run, say, SCREENS, shot, smallTargets, TIMEOUT, URL } from "./lib.mjs";
import { trySignIn } from "./account_lib.mjs";

const screen = process.env.SCREEN ?? "desktop";
const ME_KEY = process.env.ME_KEY;

/** The seek's line once it says how many wait. */
async function waiting(page) {
  const status = page.locator(".seek-status");
  await status.filter({ hasText: / of \d+ players waiting/ }).waitFor();
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

  // The operator revokes the key (the test does, on this line): the next page that uses it
  // signs the browser out and says why above the sign-in form.
  say("revoke");
  let revoked = "";
  for (const deadline = Date.now() + TIMEOUT; !revoked && Date.now() < deadline;) {
    await page.goto(`${URL}/#/leaderboard`);
    await page.goto(`${URL}/#/me`);
    const state = await page.waitForFunction(() => {
      const said = document.querySelector(".sign-in .refusal:not([hidden])");
      if (said) return { said: said.textContent };
      return document.querySelector(".activity .connection.live") ? { said: "" } : false;
    });
    revoked = (await state.jsonValue()).said;
    if (!revoked) await page.waitForTimeout(250); // not revoked yet: look again
  }
  const navAfter = (await page.locator("nav.top .account-link").textContent()) ?? "";
  const keyKept = await page.evaluate((k) => Object.keys(localStorage).some((key) => localStorage.getItem(key).includes(k)), ME_KEY);
  report({ screen, first, cancelled, again, gameId, seated, final, revoked, navAfter, keyKept, checked: seen });
});
