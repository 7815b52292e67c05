// bench/control-ui: the control UI's figures (issue 38): (a) its JavaScript gzipped (target ≤
// 150 KB); (b) the chat page's first render in headless Chromium, navigation start → the thread
// list painted, the session cookie already set (target ≤ 500 ms); (c) opening a 5,000-message
// thread until its newest messages are shown (target ≤ 1 s); (d) a list of 1,000 threads, and
// switching between two threads (click → the other's messages shown; target < 1 s each).
// The home is written as guppy's store lays it out, `guppy serve` runs on it with a dummy model
// (no request is made), Chromium (Debian's, as the e2e tests) is driven by playwright-core.
// Needs a build (npm run build). Prints median and range of each; never fails on a timing.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { LOG_FILE, THREAD_STATUS_FILE, threadDirOf } from "@guppy/core/thread-layout";
import { chromium } from "playwright-core";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const uiDir = fileURLToPath(new URL("../packages/guppy/dist/ui/", import.meta.url));
const CHROMIUM = process.env.GUPPY_TEST_CHROMIUM ?? "/usr/bin/chromium";
const ROUNDS = Math.max(1, Number(process.env.BENCH_UI_ROUNDS ?? 5));
const THREADS = 1000;
const LONG = 5000;
const LONG_ID = "http:web:long";

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figure = (label, xs, target) =>
  console.log(
    `${label}: median ${median(xs).toFixed(0)} ms (range ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}, ${xs.length} runs; target ${target})`,
  );

// (a) The bundle, as `npm run build` left it.
if (!existsSync(uiDir)) {
  console.log("control UI not built: run `npm run build` first");
  process.exit(0);
}
const files = readdirSync(uiDir);
const size = (ext) =>
  files
    .filter((f) => f.endsWith(ext))
    .reduce(
      (sum, f) => {
        const bytes = readFileSync(join(uiDir, f));
        return { raw: sum.raw + bytes.length, gz: sum.gz + gzipSync(bytes).length };
      },
      { raw: 0, gz: 0 },
    );
const js = size(".js");
const css = size(".css");
console.log(
  `UI JavaScript: ${(js.gz / 1024).toFixed(1)} KB gzipped (${(js.raw / 1024).toFixed(1)} KB minified; target ≤ 150 KB); CSS ${(css.gz / 1024).toFixed(1)} KB gzipped`,
);
if (!existsSync(CHROMIUM)) {
  console.log(`no Chromium at ${CHROMIUM}: the page timings are skipped`);
  process.exit(0);
}

// The home: 1,000 threads of two messages, one of 5,000, each with its log and status.json.
const home = mkdtempSync(join(tmpdir(), "guppy-bench-ui-"));
const now = Date.now();
function writeThread(id, count, lastActivity, text) {
  const dir = threadDirOf(home, id);
  mkdirSync(dir, { recursive: true });
  let log = "";
  for (let i = 0; i < count; i++) {
    const isBot = i % 2 === 1;
    log += `${JSON.stringify({
      date: new Date(lastActivity - (count - i) * 1000).toISOString(),
      messageId: `m${i}`,
      userId: isBot ? "guppy" : "owner",
      userName: isBot ? "guppy" : "owner",
      text: text(i),
      isBot,
    })}\n`;
  }
  writeFileSync(join(dir, LOG_FILE), log);
  writeFileSync(
    join(dir, THREAD_STATUS_FILE),
    JSON.stringify({
      lastActivity: new Date(lastActivity).toISOString(),
      messages: count,
      contextTokens: 5000,
      contextWindow: 128000,
      compactions: 0,
      cost: 0.5,
    }),
  );
}
const channels = ["telegram", "slack", "discord", "http"];
for (let i = 0; i < THREADS; i++) {
  writeThread(`${channels[i % 4]}:c${i}:default`, 2, now - (i + 5) * 60_000, (m) =>
    m === 0 ? `Thread number ${i}: what about the **plan** for week ${i % 52}?` : `Answer ${i}.`,
  );
}
writeThread(LONG_ID, LONG, now - 1000, (i) =>
  i % 2 === 0
    ? `Question ${i}: how does *this* part work?`
    : `long message ${i}: here is **an answer** with \`code\` and a list:\n\n- one\n- two\n\n\`\`\`\nconst x = ${i};\n\`\`\``,
);

// guppy serve on it, with a model no request goes to.
const child = spawn(process.execPath, [bin, "serve"], {
  env: {
    PATH: process.env.PATH,
    HOME: home,
    GUPPY_HOME: home,
    GUPPY_HTTP_PORT: "0",
    GUPPY_MODEL: "openai/dummy",
    GUPPY_BASE_URL: "http://127.0.0.1:9/v1",
    GUPPY_API: "openai-completions",
    GUPPY_API_KEY: "dummy",
    GUPPY_SANDBOX: "host",
  },
  stdio: ["ignore", "pipe", "pipe"],
});
let out = "";
child.stderr.on("data", (d) => {
  out += d;
});
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`guppy serve did not start:\n${out}`)), 30_000);
  child.stdout.on("data", (d) => {
    out += d;
    const m = /HTTP API listening on (http:\/\/\S+)/.exec(out);
    if (m && /guppy serve ready/.test(out)) {
      clearTimeout(timer);
      resolve(m[1]);
    }
  });
  child.on("exit", (code) => reject(new Error(`guppy serve exited with ${code}:\n${out}`)));
});
const token = readFileSync(join(home, "api-token"), "utf8").trim();

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
});
try {
  let context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  // Signed in once: the session cookie is in the context for every page after.
  const signing = await context.newPage();
  await signing.goto(`${url}/`);
  await signing.getByLabel("API token").fill(token);
  await signing.getByRole("button", { name: "Sign in" }).click();
  await signing.getByRole("navigation", { name: "Pages" }).waitFor();
  await signing.close();

  /**
   * Opens `hash` in a fresh page; ms from its navigation start until `selector` is first painted,
   * as the page saw it (a MutationObserver put in before the page's own script, then the next
   * animation frame): playwright's own polling is not in the figure.
   */
  async function firstPaint(hash, selector) {
    const page = await context.newPage();
    await page.addInitScript((wanted) => {
      const seen = () => {
        if (!document.querySelector(wanted)) return false;
        requestAnimationFrame(() => {
          globalThis.__painted = performance.now();
        });
        return true;
      };
      new MutationObserver((_, observer) => {
        if (seen()) observer.disconnect();
      }).observe(document, { childList: true, subtree: true, characterData: true });
    }, selector);
    await page.goto(`${url}/${hash}`);
    await page.waitForFunction(() => typeof globalThis.__painted === "number", undefined, {
      timeout: 30_000,
    });
    const ms = await page.evaluate(() => globalThis.__painted);
    if (process.env.BENCH_UI_DEBUG) {
      console.log(
        await page.evaluate(() =>
          performance
            .getEntries()
            .map(
              (e) =>
                `${e.entryType} ${e.name.replace(/^https?:\/\/[^/]+/, "")} start ${e.startTime.toFixed(0)} dur ${e.duration.toFixed(0)}`,
            )
            .join("\n"),
        ),
      );
    }
    await page.close();
    return ms;
  }

  // The floor on this machine: the sign-in form painted (the page, its script, one API call).
  const floor = [];
  for (let i = 0; i < ROUNDS; i++) {
    const fresh = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const saved = context;
    context = fresh;
    floor.push(await firstPaint("", "#token"));
    context = saved;
    await fresh.close();
  }
  figure("floor: the sign-in page painted (no session)", floor, "none");

  // The first listing after the start works the titles out (they are kept after): shown apart.
  const cold = await firstPaint("#/chat", ".thread-row");
  console.log(`chat page, first ever (titles worked out from 1,001 logs): ${cold.toFixed(0)} ms`);
  const list = [];
  for (let i = 0; i < ROUNDS; i++) list.push(await firstPaint("#/chat", ".thread-row"));
  figure(`(b)+(d) chat page first render, ${THREADS + 1} threads listed`, list, "≤ 500 ms");

  const long = [];
  const newest = `.message[data-message-id="m${LONG - 1}"]`;
  for (let i = 0; i < ROUNDS; i++) {
    long.push(await firstPaint(`#/chat/${encodeURIComponent(LONG_ID)}`, newest));
  }
  figure(`(c) open a ${LONG}-message thread until its newest message is shown`, long, "≤ 1 s");

  // Switching: a click on the other thread's row until its messages are shown.
  const page = await context.newPage();
  const a = "telegram:c0:default";
  const b = "slack:c1:default";
  await page.goto(`${url}/#/chat/${encodeURIComponent(a)}`);
  await page.locator(".message", { hasText: "Answer 0." }).waitFor({ timeout: 30_000 });
  await page.locator(`[data-thread-id="${b}"]`).waitFor({ timeout: 30_000 });
  const switches = [];
  for (let i = 0; i < ROUNDS * 2; i++) {
    const [to, answer] = i % 2 === 0 ? [b, "Answer 1."] : [a, "Answer 0."];
    // In the page: the click, then the first frame painted with the other thread's message.
    const ms = await page.evaluate(
      ([id, text]) =>
        new Promise((resolve) => {
          const t0 = performance.now();
          const shown = () =>
            [...document.querySelectorAll(".thread-view .message")].some((m) =>
              m.textContent.includes(text),
            );
          const observer = new MutationObserver(() => {
            if (!shown()) return;
            observer.disconnect();
            requestAnimationFrame(() => resolve(performance.now() - t0));
          });
          observer.observe(document.body, { childList: true, subtree: true, characterData: true });
          document.querySelector(`[data-thread-id="${id}"]`).click();
        }),
      [to, answer],
    );
    switches.push(ms);
  }
  figure("(d) switch between two threads (click → its messages shown)", switches, "< 1 s");
  await page.close();
  console.log(`load average (1 min) at the end: ${loadavg()[0].toFixed(1)}`);
} finally {
  await browser.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  rmSync(home, { recursive: true, force: true });
}
