// A refusal in the reason's words beside the server's message: the page of a game the server
// does not have (GAME_NOT_FOUND) and of an address that names no game (BAD_GAME_ID) says each
// in the words of the refusal's ErrorInfo reason, then what the server said.

import { newPage, report, run, shot, URL } from "./lib.mjs";

run(async (browser) => {
  const page = await newPage(browser);
  const said = {};
  for (const [name, id] of [["missing", crypto.randomUUID()], ["malformed", "not-a-game"]]) {
    await page.goto(`${URL}/#/game/${id}`);
    await page.reload(); // (a new hash alone does not load another game page)
    const alert = page.getByRole("alert").first();
    await alert.waitFor();
    said[name] = { id, alert: (await alert.textContent()) ?? "" };
    await shot(page, `refusal-${name}`);
  }
  report(said);
});
