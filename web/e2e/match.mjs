// Matches in the browser, on a desktop and a phone at once: pytest has made two bot accounts
// and three matches between them (an SPRT match, one of a few deals, and one cancelled at
// once), with no bot playing yet; the script says when it has seen the start, and pytest
// starts the bots:
//
//   "watching"  both screens show the list (the SPRT match being played, undecided) and, reached
//               by its link, the SPRT match's page: being played, no deal counted, its deals
//               behind closed doors: pytest starts the entrants' bots;
//   then both pages follow the match to its end with no click and no reload, and the script
//   reports what they show: the answer, the figures, the deals with each playing's marks and
//   replay; then the list again (by the page's own link), the fixed match's page, and the
//   pages of an address that names no match.
//
// Every page is checked: no sideways scroll, no serious or critical axe finding.
// MATCH_ID names the SPRT match, FIXED_ID the fixed one, CANCELLED_ID the cancelled one.

import { check, checkPage, newPage, report, run, say, SCREENS, shot, smallTargets, TIMEOUT, URL } from "./lib.mjs";

const matchId = process.env.MATCH_ID;
const fixedId = process.env.FIXED_ID;
const cancelledId = process.env.CANCELLED_ID;
/** How long the match may take: bots play a one-hand game in seconds and the SPRT decides
 * after some thirty deals, but the machine may be loaded (a hang guard, not a speed bound). */
const STAGE = TIMEOUT * 10;

/** What a match's page shows, as a person reads it. */
async function shown(page) {
  return page.evaluate(() => {
    const text = (selector) => document.querySelector(selector)?.textContent ?? null;
    const meter = document.querySelector('[role="meter"]');
    return {
      title: text("h1"),
      meta: [...document.querySelectorAll(".t-head .meta:not(.connection)")].map((p) => p.textContent),
      status: document.querySelector(".t-status")?.dataset.status ?? "",
      stateLine: text(".t-state-line"),
      progress: document.querySelector(".t-status progress")?.getAttribute("value") ?? null,
      connection: document.querySelector(".t-head .connection")?.dataset.connection ?? null,
      answer: {
        kind: document.querySelector(".m-answer")?.dataset.answer ?? null,
        title: text(".m-answer h2"),
        detail: text(".m-answer p"),
      },
      totals: text(".m-totals"),
      noFigures: text(".m-figures > p:not(.hint):not(.m-totals)"),
      mean: text('[data-figure="mean"] .m-big'),
      meanInterval: text('[data-figure="mean"] .m-interval'),
      winRate: text('[data-figure="win-rate"] .m-big'),
      winRateInterval: text('[data-figure="win-rate"] .m-interval'),
      wdl: text('[data-figure="win-rate"] .m-wdl'),
      llr: text('[data-figure="sprt"] .m-big'),
      llrLine: text('[data-figure="sprt"] .m-value'),
      meter: meter ? {
        min: meter.getAttribute("aria-valuemin"),
        max: meter.getAttribute("aria-valuemax"),
        now: meter.getAttribute("aria-valuenow"),
        text: meter.getAttribute("aria-valuetext"),
      } : null,
      hypotheses: [...document.querySelectorAll(".m-hypotheses dd")].map((dd) => dd.textContent),
      deals: [...document.querySelectorAll("table.m-deals tbody tr")].map((tr) => ({
        deal: Number(tr.dataset.deal),
        counted: tr.dataset.counted === "true",
        playings: [...tr.querySelectorAll("td.m-playing")].map((td) => ({
          state: td.dataset.state,
          game: td.dataset.game ?? null,
          link: td.querySelector("a")?.getAttribute("href") ?? null,
          marks: td.querySelector(".m-playing-marks")?.textContent ?? null,
          text: td.textContent,
        })),
        scores: [...tr.querySelectorAll("td.m-score")].map((td) => td.textContent),
        figure: tr.querySelector("td.m-deal-figure").textContent,
      })),
      noDeals: text(".m-deals-section > p:not(.hint)"),
      refusal: text(".refusal"),
    };
  });
}

/** Each match of the list: its line as read, and its state. */
async function listed(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll("li[data-match]")].map((li) => [
    li.dataset.match,
    { text: li.innerText.replace(/\s+/g, " ").trim(), state: li.querySelector(".t-state").textContent, answer: li.dataset.answer, line: li.querySelector(".m-answer-line").textContent },
  ])));
}

run(async (browser) => {
  check(matchId && fixedId && cancelledId, "MATCH_ID, FIXED_ID and CANCELLED_ID must be set");
  const checked = {};
  const pages = {};
  for (const [screen, options] of Object.entries(SCREENS)) pages[screen] = await newPage(browser, options);

  // The start: the list, then the match's page by its link; nothing played yet.
  const before = {};
  const listedBefore = {};
  for (const [screen, page] of Object.entries(pages)) {
    await page.goto(`${URL}/#/`);
    await page.getByRole("navigation", { name: "pages" }).getByRole("link", { name: "Matches" }).click();
    await page.locator(`li[data-match="${matchId}"]`).waitFor();
    await page.locator(`li[data-match="${cancelledId}"] .t-state`).getByText("cancelled").waitFor();
    listedBefore[screen] = await listed(page);
    await checkPage(page, `list before (${screen})`, checked);
    await page.locator(`li[data-match="${matchId}"] a.t-name`).click();
    await page.waitForURL(new RegExp(`#/match/${matchId}$`));
    // (the director makes the first deals' games at once: they wait for the bots)
    await page.locator('table.m-deals td.m-playing[data-state="closed"]').first().waitFor();
    before[screen] = await shown(page);
    await checkPage(page, `match before (${screen})`, checked);
    await shot(page, `match-before-${screen}`);
  }
  say("watching");

  // The end, with no click: the SPRT decides and the deals in play are played out.
  const final = {};
  for (const [screen, page] of Object.entries(pages)) {
    await page.locator('.t-status[data-status="finished"]').waitFor({ timeout: STAGE });
    // Each counted playing's marks are asked once the deal is counted: wait for them.
    await page.waitForFunction(() => [...document.querySelectorAll('td.m-playing[data-state="counted"]')]
      .every((td) => td.querySelector(".m-playing-marks")), null, { timeout: STAGE, polling: 200 });
    final[screen] = await shown(page);
    await checkPage(page, `match (${screen})`, checked);
    await shot(page, `match-${screen}`);
  }
  const small = await smallTargets(pages.phone, "main a, main button");

  // The list again, by the page's own link: every match with its answer.
  const after = {};
  for (const [screen, page] of Object.entries(pages)) {
    await page.locator(".crumbs").getByRole("link", { name: "Matches" }).click();
    await page.locator(`li[data-match="${matchId}"] .t-state`).getByText("finished").waitFor();
    await page.locator(`li[data-match="${fixedId}"] .t-state`).getByText("finished").waitFor({ timeout: STAGE });
    after[screen] = await listed(page);
    await checkPage(page, `list (${screen})`, checked);
    await shot(page, `matches-${screen}`);
  }

  // The fixed match's page: its answer is what its mean's interval says.
  const fixed = {};
  for (const [screen, page] of Object.entries(pages)) {
    await page.locator(`li[data-match="${fixedId}"] a.t-name`).click();
    await page.locator('.t-status[data-status="finished"]').waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('td.m-playing[data-state="counted"]')]
      .every((td) => td.querySelector(".m-playing-marks")), null, { timeout: STAGE, polling: 200 });
    fixed[screen] = await shown(page);
    await checkPage(page, `fixed (${screen})`, checked);
    await shot(page, `match-fixed-${screen}`);
  }

  // Addresses that name no match.
  const bad = {};
  for (const [name, id] of [["malformed", "not-a-match"], ["unknown", "00000000-0000-4000-8000-000000000000"]]) {
    const page = pages.desktop;
    await page.goto(`${URL}/#/match/${id}`);
    await page.locator(".refusal").waitFor();
    bad[name] = (await page.locator(".refusal").textContent()) ?? "";
    await checkPage(page, `bad ${name}`, checked);
  }

  report({ listedBefore, before, final, after, fixed, bad, small, checked });
});
