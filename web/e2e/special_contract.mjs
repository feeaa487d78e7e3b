// A texas42-house hand that reaches a special contract: the person creates the game in the
// lobby (seat 0 bids first on the first hand; the server's heuristic bots in the others), bids
// the most marks offered, and on winning the auction declares nello (sevens if nello is not
// offered). During the nello hand the partner sits out; the hand is played to its end. Then
// the person resigns.

import {
  check, checkOnlyLegalClickable, checkPage, createGame, handResult, newPage, pickRandom, random, report, run, shot, takeTurn, waitTurn,
} from "./lib.mjs";

const MAX_HANDS = 8;
const MARK_BID = /^Bid \d+ \((\d+) marks?\)$/;

async function handNumber(page) {
  const line = (await page.locator(".table-view .contract").textContent()) ?? "";
  return Number(/^Hand (\d+)/.exec(line)?.[1] ?? 0);
}

run(async (browser) => {
  const page = await newPage(browser);
  const rng = random();
  // Every page on the way: no sideways scroll, nothing serious or critical for axe.
  const checked = {};
  const gameId = await createGame(page, {
    preset: "texas42-house",
    name: "special contracts",
    seat: "0",
    playerName: "dave",
    options: { "first hand opener": "opener_seat", "first hand opener value": "0" },
    houseBots: { 1: "heuristic", 2: "heuristic", 3: "heuristic" },
  });

  let declared = "";
  let declaredIn = 0;
  let sittingOut = "";
  let contractLine = "";
  const offered = new Set();
  for (;;) {
    const state = await waitTurn(page, declaredIn ? declaredIn + 1 : MAX_HANDS + 1);
    if (state !== "turn") break;
    await checkOnlyLegalClickable(page, gameId);
    const hand = await handNumber(page);
    const clicked = await takeTurn(page, (cs) => {
      for (const c of cs) if (c.kind === "choice") offered.add(c.label.replace(/\d+/g, "N"));
      const marks = cs.filter((c) => MARK_BID.test(c.label));
      if (marks.length) return marks.reduce((a, b) => (Number(MARK_BID.exec(b.label)[1]) > Number(MARK_BID.exec(a.label)[1]) ? b : a));
      const special = cs.find((c) => c.label === "Declare nello") ?? cs.find((c) => c.label === "Declare sevens");
      if (special && !declared) return special;
      const pass = cs.find((c) => c.label === "Pass");
      return pass ?? pickRandom(rng)(cs);
    });
    if (/^Declare (nello|sevens)$/.test(clicked) && !declared) {
      declared = clicked.replace("Declare ", "");
      declaredIn = hand;
      contractLine = (await page.locator(".table-view .contract").textContent()) ?? "";
      if (declared === "nello") {
        const partner = page.getByRole("region", { name: "seat 2" });
        sittingOut = (await partner.locator(".badge").allTextContents()).join(",");
        check(sittingOut.includes("sits out"), `the partner does not sit out: ${sittingOut}`);
        await shot(page, "texas42-nello");
      } else {
        await shot(page, "texas42-sevens");
      }
      await checkPage(page, `table, ${declared}`, checked);
    }
  }
  check(declared, `no special contract declared in ${MAX_HANDS} hands`);
  // The special contract's own hand (a result of an earlier hand may be in the log too).
  const result = await handResult(page, declaredIn, / and (made it|was set|were set):/);
  check(contractLine.includes(`contract: ${declared}`), `the hand does not show the contract: ${contractLine}`);
  // Enough: the person resigns (asked to confirm first), and the other team wins.
  await page.getByRole("button", { name: "Resign" }).click();
  await page.getByRole("button", { name: "Yes, resign" }).click();
  await page.locator(".turn-line.over").waitFor();
  const final = (await page.locator(".turn-line.over").textContent()) ?? "";
  await checkPage(page, "game over", checked);
  report({ gameId, declared, hand: declaredIn, sittingOut, contractLine, result, offered: [...offered].sort(), final, checked });
});
