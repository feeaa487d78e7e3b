// The browser side of bench_browser.py: Debian's Chromium (playwright-core) with one page of
// the web app, driven by lines on stdin, answering on stdout:
//
//   open URL   -> "ok" once a new page follows its game live
//   clock      -> "clock MS": the page's clock now (performance.timeOrigin + now, ms since the
//                 epoch), for the offset to Python's time.time()
//   marks      -> "marks JSON": [[version, ms since the epoch], ...] of the versions the page's
//                 WatchGame stream delivered (the app's performance marks), then cleared
//   quit

import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
});
let page = await (await browser.newContext()).newPage();

const out = (line) => process.stdout.write(`${line}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.split(" ");
  if (command === "open") {
    // A page of its own for each round: rounds do not inherit each other's state.
    await page.context().close();
    page = await (await browser.newContext()).newPage();
    page.on("pageerror", (e) => process.stderr.write(`page error: ${e.message}\n`));
    await page.goto(arg);
    await page.locator(".connection.live").waitFor({ timeout: 60000 });
    await page.evaluate(() => performance.clearMarks());
    out("ok");
  } else if (command === "clock") {
    out(`clock ${await page.evaluate(() => performance.timeOrigin + performance.now())}`);
  } else if (command === "marks") {
    const marks = await page.evaluate(() => {
      const found = performance
        .getEntriesByType("mark")
        .filter((m) => m.name.startsWith("boneyard:version:"))
        .map((m) => [Number(m.name.split(":")[2]), performance.timeOrigin + m.startTime]);
      performance.clearMarks();
      return found;
    });
    out(`marks ${JSON.stringify(marks)}`);
  } else if (command === "quit") {
    break;
  }
}
await browser.close();
