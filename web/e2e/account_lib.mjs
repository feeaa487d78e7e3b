// What the account scripts share (accounts.mjs, seek.mjs): signing in with a key through the
// page's form, as a person pastes it, and whether a key can be read anywhere on the page.

/** Sign in with `key` in the form of the page (#/me, or a page that asks first): the
 * refusal the page said, or "" when it signed in. */
export async function trySignIn(page, key) {
  const form = page.getByRole("form", { name: "sign in" });
  await form.getByLabel("Your account's key").fill(key);
  await form.getByRole("button", { name: "Sign in" }).click();
  const outcome = await page.waitForFunction(() => {
    const said = document.querySelector(".sign-in .refusal:not([hidden])");
    if (said && !document.querySelector(".sign-in button[disabled]")) return { said: said.textContent };
    return document.querySelector(".sign-in") ? false : { said: "" };
  });
  return (await outcome.jsonValue()).said;
}

/** Whether the key can be read on the page: in its text, its markup or its fields. */
export async function keyShown(page, key) {
  return page.evaluate((k) => document.documentElement.outerHTML.includes(k) || [...document.querySelectorAll("input")].some((i) => i.value.includes(k)), key);
}
