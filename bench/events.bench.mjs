// bench/events: the event bus under 10,000 periodic events (issue 34).
//  - gateway RSS growth with 10,000 periodic event files loaded vs none (target ≤ 20 MB): once
//    settled (30 s after the files were read: the gateway's idle collection, due 10–15 s after a load,
//    has given back the young generation V8 grew while reading), and 5 s after (before it)
//  - idle CPU of the gateway with them loaded, over 10 s once settled (target ≤ 1% of a core),
//    and over the 25 s before that, which hold the one post-load collection
//  - firing delay of a due one-shot among them: its slot → the bus sending the prompt (target
//    ≤ 100 ms), and → the request reaching the mock LLM
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LLMock } from "@copilotkit/aimock";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const EVENTS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const mock = new LLMock({ port: 0, host: "127.0.0.1" });
const arrivals = [];
mock.on({ predicate: () => true }, (request) => {
  const last = request.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
  arrivals.push({ at: Date.now(), text });
  return { content: "ok" };
});
const url = await mock.start();

function serve(home) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, "serve"], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GUPPY_HOME: home,
      GUPPY_HTTP_PORT: "0",
      GUPPY_SANDBOX: "host",
      GUPPY_TIMEZONE: "UTC",
      GUPPY_MODEL: "openai/gpt-4o-mini",
      GUPPY_BASE_URL: `${url}/v1`,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "bench",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const ready = {};
  const loadedAll = new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (/guppy serve ready/.test(out) && !ready.t) ready.t = performance.now() - t0;
      // The event files are read after the ready line, a few hundred per turn of the loop.
      if (/scheduled event\(s\) loaded in/.test(out))
        resolve({ ready: ready.t, loaded: performance.now() - t0 });
    });
    child.on("exit", (code) => reject(new Error(`guppy serve exited ${code}: ${out}`)));
  });
  return {
    child,
    ready: loadedAll,
    stop: () =>
      new Promise((r) => {
        child.on("exit", r);
        child.kill("SIGTERM");
      }),
  };
}

/** How long after the files were read the gateway counts as settled (see the top). */
const SETTLE_MS = 30_000;

const rssMb = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100/s)
};

/** The hour of the day now in `zone`: schedules are set 3 to 20 hours ahead, none due in the bench. */
const hourIn = (zone) =>
  Number(
    new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" }).format(
      new Date(),
    ),
  );

/**
 * A home with `events` periodic event files. `distinct`: (nearly) every event its own schedule
 * and zone, the worst case (croner parses each); else 24 schedules shared between them.
 */
function makeHome(events, distinct) {
  const home = mkdtempSync(join(tmpdir(), "guppy-bench-events-"));
  const dir = join(home, "events");
  mkdirSync(dir, { recursive: true });
  const zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"];
  // distinct: minute, hour and the days of the month make 10,000 patterns, none shared.
  for (let i = 0; i < events; i++) {
    const zone = distinct ? zones[i % zones.length] : "Europe/Berlin";
    const minute = distinct ? i % 60 : (i % 2) * 30;
    const hour = (hourIn(zone) + 3 + (distinct ? Math.floor(i / 60) % 18 : i % 12)) % 24;
    const days = distinct && i % 3 === 0 ? "1-5" : "*";
    const dom = distinct ? `1-${19 + Math.floor(i / 1080)}` : "*";
    writeFileSync(
      join(dir, `p${i}.json`),
      JSON.stringify({
        type: "periodic",
        threadId: `http:api:t${i % 500}`,
        text: `periodic ${i}`,
        schedule: `${minute} ${hour} ${dom} * ${days}`,
        timezone: zone,
      }),
    );
  }
  return home;
}

/** CPU of `pid` over `ms` from now, % of a core. */
async function cpuOver(pid, ms) {
  const c0 = cpuTicks(pid);
  const w0 = performance.now();
  await sleep(ms);
  return ((cpuTicks(pid) - c0) / 100 / ((performance.now() - w0) / 1000)) * 100;
}

/** RSS 5 s after the files were read and once settled; with `cpu`, CPU before and after settling. */
async function measure(gateway, cpu = false) {
  await sleep(5000);
  const early = rssMb(gateway.child.pid);
  const settling = cpu ? await cpuOver(gateway.child.pid, SETTLE_MS - 5000) : undefined;
  if (!cpu) await sleep(SETTLE_MS - 5000);
  const settled = rssMb(gateway.child.pid);
  const idle = cpu ? await cpuOver(gateway.child.pid, 10_000) : undefined;
  return { early, settled, settling, idle };
}

// Baseline: no events.
const emptyHome = makeHome(0, false);
const empty = serve(emptyHome);
const emptyReady = await empty.ready;
const base = await measure(empty);
await empty.stop();

// 10,000 periodic events sharing 24 schedules.
const sharedHome = makeHome(EVENTS, false);
const shared = serve(sharedHome);
const sharedReady = await shared.ready;
const sharedRss = await measure(shared);
await shared.stop();
rmSync(sharedHome, { recursive: true, force: true });

// 10,000 periodic events, (nearly) each its own schedule.
const home = makeHome(EVENTS, true);
const loaded = serve(home);
const loadedReady = await loaded.ready;
const loadedRss = await measure(loaded, true);

// Firing delay: one-shots due on whole seconds, written 2 s ahead.
const busDelays = [];
const llmDelays = [];
for (let i = 0; i < 5; i++) {
  const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
  writeFileSync(
    join(home, "events", `due${i}.json`),
    JSON.stringify({
      type: "one-shot",
      threadId: "http:api:bench",
      text: `due-${i}`,
      schedule: new Date(at).toISOString().replace(".000Z", "Z"),
    }),
  );
  const t0 = Date.now();
  while (!arrivals.some((a) => a.text?.includes(`due-${i}`)) && Date.now() - t0 < 20_000)
    await sleep(5);
  const arrival = arrivals.find((a) => a.text?.includes(`due-${i}`));
  if (arrival) llmDelays.push(arrival.at - at);
  await sleep(300);
}
await loaded.stop();
for (const line of readFileSync(join(home, "logs", "gateway.log"), "utf8").split("\n")) {
  if (!line.includes('"event fired"')) continue;
  const record = JSON.parse(line);
  if (/^due\d$/.test(record.id)) busDelays.push(record.delayMs);
}
await mock.stop();
rmSync(emptyHome, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });

const n = EVENTS.toLocaleString("en-US");
console.log(
  `start to ready        ${emptyReady.ready.toFixed(0)} ms with no events, ${loadedReady.ready.toFixed(0)} ms with ${n}`,
);
console.log(
  `start to events read  ${sharedReady.loaded.toFixed(0)} ms for ${n} files sharing 24 schedules, ${loadedReady.loaded.toFixed(0)} ms for ${n} distinct ones (read after the ready line, the gateway answering meanwhile)`,
);
const growth = (m) =>
  `${(m.settled - base.settled).toFixed(1)} MB settled (${base.settled.toFixed(1)} → ${m.settled.toFixed(1)} MB), ${(m.early - base.early).toFixed(1)} MB 5 s after reading (${base.early.toFixed(1)} → ${m.early.toFixed(1)} MB)`;
console.log(
  `gateway RSS growth    ${growth(sharedRss)} with ${n} periodic events sharing 24 schedules (target ≤ 20 MB)`,
);
console.log(`                      ${growth(loadedRss)} with ${n} distinct schedules`);
console.log(
  `idle CPU              ${loadedRss.idle.toFixed(2)}% of a core over 10 s with them loaded, ${SETTLE_MS / 1000} s after they were read (target ≤ 1%); ${loadedRss.settling.toFixed(2)}% over the ${(SETTLE_MS - 5000) / 1000} s before, with the one post-load collection`,
);
console.log(
  `firing delay          slot → prompt sent: median ${median(busDelays)} ms, max ${Math.max(...busDelays)} ms over ${busDelays.length} (target ≤ 100 ms)`,
);
console.log(
  `                      slot → request at the LLM: median ${median(llmDelays)} ms, max ${Math.max(...llmDelays)} ms`,
);
