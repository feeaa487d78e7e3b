// The new-game form offers the server's presets (GameService.ListPresets), each by its
// description; choosing one shows its values beside "the preset's" of each option, and the
// house-bot seats follow its table size.

import { checkPage, newPage, report, run, shot, URL } from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  await page.goto(`${URL}/#/`);
  const form = page.getByRole("form", { name: "new game" });
  const menu = form.getByLabel("game", { exact: true });
  // The form is drawn once ListPresets answers, with every preset at once: wait for it.
  await menu.locator("option").first().waitFor({ state: "attached" });
  const offered = await menu.locator("option").evaluateAll((options) => options.map((o) => [o.value, o.textContent]));
  await menu.selectOption("moon-overcall");
  await form.getByText("Options (unset: the preset's value)").click();
  const shown = {
    moon_min_bid: await form.getByLabel("moon min bid", { exact: true }).getAttribute("placeholder"),
    moon_overcall: await form.getByLabel("moon overcall", { exact: true }).locator("option").first().textContent(),
    widow: await form.getByLabel("widow", { exact: true }).locator("option").first().textContent(),
    first_hand_opener: await form.getByLabel("first hand opener", { exact: true }).locator("option").first().textContent(),
  };
  const seats = await form.locator("select[id^=new-bot-]").count();
  await shot(page, "lobby-presets");
  // The form with every option open: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  await checkPage(page, "lobby with the options", checked);
  report({ offered, shown, seats, checked });
});
