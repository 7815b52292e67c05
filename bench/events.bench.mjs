// bench/events: the event bus under 10,000 periodic events (issue 34).
//  - gateway RSS growth with 10,000 periodic event files loaded vs none (target ≤ 20 MB)
//  - idle CPU of the gateway with them loaded, over 10 s (target ≤ 1% of a core)
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
  for (let i = 0; i < events; i++) {
    const zone = distinct ? zones[i % zones.length] : "Europe/Berlin";
    const minute = distinct ? i % 60 : (i % 2) * 30;
    const hour = (hourIn(zone) + 3 + (distinct ? Math.floor(i / 60) % 18 : i % 12)) % 24;
    const days = distinct && i % 3 === 0 ? "1-5" : "*";
    writeFileSync(
      join(dir, `p${i}.json`),
      JSON.stringify({
        type: "periodic",
        threadId: `http:api:t${i % 500}`,
        text: `periodic ${i}`,
        schedule: `${minute} ${hour} * * ${days}`,
        timezone: zone,
      }),
    );
  }
  return home;
}

// Baseline: no events.
const emptyHome = makeHome(0, false);
const empty = serve(emptyHome);
const emptyReady = await empty.ready;
await sleep(5000);
const baseRss = rssMb(empty.child.pid);
await empty.stop();

// 10,000 periodic events sharing 24 schedules.
const sharedHome = makeHome(EVENTS, false);
const shared = serve(sharedHome);
const sharedReady = await shared.ready;
await sleep(5000);
const sharedRss = rssMb(shared.child.pid);
await shared.stop();
rmSync(sharedHome, { recursive: true, force: true });

// 10,000 periodic events, each its own schedule.
const home = makeHome(EVENTS, true);
const loaded = serve(home);
const loadedReady = await loaded.ready;
await sleep(5000);
const loadedRss = rssMb(loaded.child.pid);
// Idle: once the heap has settled after the start scan.
await sleep(5000);
const c0 = cpuTicks(loaded.child.pid);
const w0 = performance.now();
await sleep(10_000);
const cpuPct = ((cpuTicks(loaded.child.pid) - c0) / 100 / ((performance.now() - w0) / 1000)) * 100;

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
console.log(
  `gateway RSS growth    ${(sharedRss - baseRss).toFixed(1)} MB with ${n} periodic events sharing 24 schedules (target ≤ 20 MB; ${baseRss.toFixed(1)} → ${sharedRss.toFixed(1)} MB)`,
);
console.log(
  `                      ${(loadedRss - baseRss).toFixed(1)} MB with ${n} distinct schedules (${baseRss.toFixed(1)} → ${loadedRss.toFixed(1)} MB)`,
);
console.log(
  `idle CPU              ${cpuPct.toFixed(2)}% of a core over 10 s with them loaded, 10 s after they were read (target ≤ 1%)`,
);
console.log(
  `firing delay          slot → prompt sent: median ${median(busDelays)} ms, max ${Math.max(...busDelays)} ms over ${busDelays.length} (target ≤ 100 ms)`,
);
console.log(
  `                      slot → request at the LLM: median ${median(llmDelays)} ms, max ${Math.max(...llmDelays)} ms`,
);
