// The browser side of bench_browser.py: Debian's Chromium (playwright-core) with one page of
// the web app, driven by lines on stdin, answering on stdout:
//
//   open URL   -> "ok" once a new page follows its game live
//   clock      -> "clock MS": the page's clock now (performance.timeOrigin + now, ms since the
//                 epoch), for the offset to Python's time.time()
//   marks      -> "marks JSON": [[version, ms since the epoch], ...] of the versions the page's
//                 WatchGame stream delivered (the app's performance marks), then cleared
//   serve JSON -> "serving URL": a static server in this process for the builds of the web app
//                 to compare, {"apps": {"before": DIR, ...}, "upstream": URL, "gzip": bool}: URL/NAME/
//                 is the build in DIR, its files as the server serves them (gzip only if it
//                 does), and every other path under URL/NAME/ (the app's API calls: its base URL
//                 is the folder it was served from) goes to the server at `upstream`
//   load JSON  -> "load JSON": {"url", "seat": {key, value}}: a new context (nothing cached)
//                 holding the seat (localStorage), opens URL, a game where it is that seat's
//                 turn; answers when a legal tile or choice can be clicked: {"ms": from the
//                 start of the navigation to then, "bodies": bytes of the document, script and
//                 stylesheet as transferred (their bodies), "transfer": the same with headers}
//   quit

import { createReadStream, statSync } from "node:fs";
import { createServer, request } from "node:http";
import { extname, join, normalize } from "node:path";
import { createInterface } from "node:readline";
import { createGzip } from "node:zlib";
import { chromium } from "playwright-core";

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
});
let page = await (await browser.newContext()).newPage();

const out = (line) => process.stdout.write(`${line}\n`);

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

/** The static server and proxy of `serve`. */
function serve({ apps, upstream, gzip }) {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const [, name, ...rest] = (req.url ?? "/").split("?")[0].split("/");
    const dir = apps[name];
    if (!dir) {
      res.writeHead(404).end();
      return;
    }
    const path = rest.join("/");
    if (req.method === "GET" || req.method === "HEAD") {
      const file = normalize(join(dir, path || "index.html"));
      let size;
      try {
        if (!file.startsWith(normalize(dir))) throw new Error("outside");
        size = statSync(file).size;
      } catch {
        res.writeHead(404).end();
        return;
      }
      const headers = { "content-type": TYPES[extname(file)] ?? "application/octet-stream" };
      const zipped = gzip && /\bgzip\b/.test(req.headers["accept-encoding"] ?? "");
      if (zipped) headers["content-encoding"] = "gzip";
      else headers["content-length"] = String(size);
      res.writeHead(200, headers);
      if (req.method === "HEAD") return res.end();
      const body = createReadStream(file);
      (zipped ? body.pipe(createGzip({ level: 6 })) : body).pipe(res);
      return;
    }
    // The app's API: to the server, the answer streamed back as it comes (WatchGame).
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: `/${path}`, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    res.on("close", () => forward.destroy());
    req.pipe(forward);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

/** In the page, before the app: note when a legal tile or choice can first be clicked. */
function noteFirstLegal() {
  const look = () => {
    if (window.__firstLegal !== undefined) return;
    const ready = document.querySelector(".hand button.tile:not([disabled]), .choices button:not([disabled])");
    if (ready && document.querySelector(".turn-line.yours")) window.__firstLegal = performance.now();
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true, attributes: true });
}

async function load({ url, seat }) {
  const context = await browser.newContext();
  await context.addInitScript(([key, value]) => localStorage.setItem(key, value), [seat.key, seat.value]);
  await context.addInitScript(noteFirstLegal);
  const p = await context.newPage();
  p.on("pageerror", (e) => process.stderr.write(`page error: ${e.message}\n`));
  await p.goto(url);
  await p.waitForFunction(() => window.__firstLegal !== undefined, null, { timeout: 60000 });
  const figures = await p.evaluate(() => {
    const own = [performance.getEntriesByType("navigation")[0], ...performance.getEntriesByType("resource").filter((r) => /\.(js|css)$/.test(new URL(r.name).pathname))];
    return {
      ms: window.__firstLegal,
      bodies: own.reduce((n, r) => n + r.encodedBodySize, 0),
      decoded: own.reduce((n, r) => n + r.decodedBodySize, 0),
      transfer: own.reduce((n, r) => n + r.transferSize, 0),
      files: own.length,
    };
  });
  await context.close();
  return figures;
}

for await (const line of createInterface({ input: process.stdin })) {
  const space = line.indexOf(" ");
  const [command, arg] = space < 0 ? [line, ""] : [line.slice(0, space), line.slice(space + 1)];
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
  } else if (command === "serve") {
    out(`serving ${await serve(JSON.parse(arg))}`);
  } else if (command === "load") {
    try {
      out(`load ${JSON.stringify(await load(JSON.parse(arg)))}`);
    } catch (error) {
      out(`failed ${String(error?.message ?? error).split("\n")[0]}`);
    }
  } else if (command === "quit") {
    break;
  }
}
await browser.close();
process.exit(0);
