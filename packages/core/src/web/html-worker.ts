import { parentPort } from "node:worker_threads";
import { htmlToMarkdown } from "./html-to-markdown.js";
import type { HtmlJob, HtmlWorkerReport } from "./html-worker-client.js";

// The thread read_url's HTML conversion runs on (html-worker-client.ts starts it): parsing,
// Readability and the Markdown walk take a few hundred milliseconds of CPU on a large page, which
// on the gateway's thread would stall every other conversation. Jobs run one after another.

const port = parentPort;
if (!port) throw new Error("html-worker.js runs as a worker thread (html-worker-client.ts).");

// The libraries load as soon as the worker starts, and "ready" is reported before any page is
// converted: the client takes a worker that ends before "ready" for one that could not start
// (and converts on its own thread), never for one a page brought down.
const loaded = Promise.all([import("linkedom"), import("@mozilla/readability")]).then(() => {
  port.postMessage({ type: "ready" } satisfies HtmlWorkerReport);
});

port.on("message", async (job: HtmlJob) => {
  let report: HtmlWorkerReport;
  try {
    await loaded;
    report = { type: "done", id: job.id, page: await htmlToMarkdown(job.html, job.url) };
  } catch (error) {
    report = {
      type: "failed",
      id: job.id,
      message: error instanceof Error ? error.message : String(error),
    };
  }
  port.postMessage(report);
});
