// bench/read-url: read_url of a 1 MB article page (navigation, a large inline script, ad blocks
// and ~1,600 paragraphs with links) served from 127.0.0.1 by this process: time from the call
// to the Markdown result (target ≤ 300 ms), the first call (which starts the conversion's worker
// thread and loads linkedom and Readability there) apart from the median of later ones, the peak
// RSS the reads added (maxRSS, worker included, over the RSS before the first one), and the
// longest this thread's event loop was held meanwhile (the conversion runs on a worker, so other
// conversations go on). Needs a build (npm run build). Prints figures; never fails on a timing.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createReadUrlTool } from "@guppy/core/tools";
import { htmlToMarkdown } from "../packages/core/dist/web/page-to-text.js";

const RUNS = Number(process.env.BENCH_READ_URL_RUNS ?? 15);
const mb = (bytes) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function articlePage(targetBytes) {
  const nav = Array.from({ length: 200 }, (_, i) => `<a href="/section/${i}">Section ${i}</a>`);
  const script = `<script>window.data = ${JSON.stringify(
    Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ["a", "b"] })),
  )};</script>`;
  const ad = (i) =>
    `<div class="ad advertisement sponsored" id="ad-${i}"><a href="https://ads.example/${i}">Buy now ${i}</a></div>`;
  const head = `<!doctype html><html><head><meta charset="utf-8"><title>A long article | Bench</title>${script}</head><body><nav>${nav.join(" ")}</nav>${ad(0)}<article><h1>A long article</h1>`;
  const tail = `</article><aside class="sidebar">${ad(1)}${ad(2)}</aside><footer>footer</footer></body></html>`;
  const parts = [];
  let size = head.length + tail.length;
  for (let i = 0; size < targetBytes; i++) {
    const p =
      i % 40 === 0
        ? `<h2>Part ${i / 40}</h2>`
        : i % 15 === 0
          ? `<ul><li>point ${i}</li><li>another point</li><li>a third</li></ul>`
          : `<p>Paragraph ${i} of the article, with <a href="/ref/${i}">a reference</a>, <em>some emphasis</em> and <code>code()</code>. ${"Words that carry the argument along, one sentence after another. ".repeat(8)}</p>`;
    parts.push(p);
    size += p.length;
  }
  return Buffer.from(head + parts.join("\n") + tail);
}

const page = articlePage(1024 * 1024);
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(page);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/article`;
const artifacts = mkdtempSync(join(tmpdir(), "guppy-bench-read-url-"));
const tool = createReadUrlTool({
  policy: { allowPrivate: false, allowHosts: ["127.0.0.1"] },
  artifactsDir: () => artifacts,
});

globalThis.gc?.();
const rssBefore = process.memoryUsage.rss();
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const cpuTimes = [];
const timed = async () => {
  const t0 = performance.now();
  const c0 = cpuMs();
  const result = await tool.execute("bench", { url });
  cpuTimes.push(cpuMs() - c0);
  return { ms: performance.now() - t0, result };
};
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const first = await timed();
const maxRssFirst = process.resourceUsage().maxRSS * 1024;
const times = [];
let last = first.result;
for (let i = 0; i < RUNS; i++) {
  const run = await timed();
  times.push(run.ms);
  last = run.result;
}
const maxRssAfter = process.resourceUsage().maxRSS * 1024;
loopDelay.disable();
const html = page.toString("utf8");
const convert = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  await htmlToMarkdown(html, url);
  convert.push(performance.now() - t0);
}
const markdown = last.details.fullOutputPath
  ? readFileSync(last.details.fullOutputPath, "utf8")
  : last.content[0].text;
console.log(
  `page: ${mb(page.length)} of HTML -> ${markdown.length.toLocaleString("en-US")} chars of Markdown (${last.details.fullOutputPath ? "over 50,000: spilled to a file" : "whole"})`,
);
console.log(`machine: ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}`);
console.log(
  `first read_url (starts the worker, which loads linkedom and Readability): ${first.ms.toFixed(0)} ms`,
);
console.log(
  `read_url, median of ${RUNS}: ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}; target <= 300 ms)`,
);
console.log(
  `  CPU time of this process (all threads) per read_url, median: ${median(cpuTimes.slice(1)).toFixed(0)} ms (wall time above includes waiting for a busy machine's cores)`,
);
console.log(
  `  this thread's event loop held at most ${(loopDelay.max / 1e6).toFixed(0)} ms during the reads (p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms)`,
);
console.log(
  `  HTML -> Markdown alone on this thread (no worker), median: ${median(convert).toFixed(0)} ms`,
);
console.log(
  `peak RSS added: ${mb(maxRssFirst - Math.max(maxRssBefore, rssBefore))} by the first read, ${mb(maxRssAfter - Math.max(maxRssBefore, rssBefore))} over all reads (RSS before: ${mb(rssBefore)})`,
);
server.close();
rmSync(artifacts, { recursive: true, force: true });
