import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { htmlToMarkdown } from "./html-to-markdown.js";
import type { PageText } from "./types.js";

// read_url's HTML → Markdown off the calling thread. One worker (html-worker.ts) is started on
// the first page and kept for a while (idleMs), so later pages skip its start and module loading;
// it holds the process open only while it has work. A worker that cannot start (no built worker
// file, as under a TypeScript test runner) leaves the conversion to this thread; one that dies or
// hangs mid-page fails that page with an error saying so, and the next page gets a new worker.
// A run's abort ends the worker converting its page at once.

/** A page for the worker to convert. */
export interface HtmlJob {
  id: number;
  html: string;
  url: string;
}

/** What the worker reports. */
export type HtmlWorkerReport =
  | { type: "ready" }
  | { type: "done"; id: number; page: PageText }
  | { type: "failed"; id: number; message: string };

export interface HtmlConverter {
  /** `html` (fetched from `url`) as Markdown; rejects when `signal` aborts. */
  convert(html: string, url: string, signal?: AbortSignal): Promise<PageText>;
  /**
   * Starts the worker if it is not running, so its start and module loading overlap the page's
   * download; an unused one ends after idleMs like any idle worker.
   */
  warm(): void;
  /** Ends the worker (tests, shutdown); a later convert starts a new one. */
  close(): Promise<void>;
}

export interface HtmlConverterOptions {
  /** The worker's module; default html-worker.js beside this file (tests: a stand-in). */
  workerUrl?: URL;
  /** How long an idle worker is kept (default 2 minutes). */
  idleMs?: number;
  /** How long one page may take before its worker is ended (default 30 s). */
  timeoutMs?: number;
  /** The worker's heap cap: a pathological page ends the worker, not the process (default 512). */
  maxHeapMb?: number;
}

interface Pending extends HtmlJob {
  resolve(page: PageText): void;
  reject(error: Error): void;
  done(): void;
}

interface Running {
  worker: Worker;
  ready: boolean;
}

export function createHtmlConverter(options: HtmlConverterOptions = {}): HtmlConverter {
  const workerUrl = options.workerUrl ?? new URL("./html-worker.js", import.meta.url);
  const idleMs = options.idleMs ?? 120_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxHeapMb = options.maxHeapMb ?? 512;
  /** Set once a worker could not start: conversions run on this thread from then on. */
  let inThread = workerUrl.protocol === "file:" && !existsSync(fileURLToPath(workerUrl));
  let running: Running | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const settleIdle = () => {
    if (!running) return;
    if (pending.size > 0) {
      running.worker.ref();
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = undefined;
      return;
    }
    running.worker.unref();
    idleTimer ??= setTimeout(() => void stop(), idleMs);
    idleTimer.unref();
  };

  const stop = async (): Promise<void> => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    const current = running;
    running = undefined;
    if (current) await current.worker.terminate();
  };

  /** Ends the current worker and gives its other pages to a new one. */
  const restart = () => {
    const old = running;
    running = undefined;
    if (old) void old.worker.terminate();
    if (pending.size > 0) {
      const worker = start();
      for (const job of pending.values()) post(worker, job);
    }
  };

  const start = (): Running => {
    const worker = new Worker(workerUrl, {
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
      stdout: false,
      stderr: false,
    });
    const current: Running = { worker, ready: false };
    running = current;
    worker.on("message", (report: HtmlWorkerReport) => {
      if (report.type === "ready") {
        current.ready = true;
        return;
      }
      const job = pending.get(report.id);
      if (!job) return;
      job.done();
      if (report.type === "done") job.resolve(report.page);
      else job.reject(new Error(`read_url could not convert ${job.url}: ${report.message}`));
      settleIdle();
    });
    const lost = (reason: string) => {
      if (running !== current) return;
      running = undefined;
      if (!current.ready) {
        // The worker never started (its file, its imports): this thread converts instead.
        inThread = true;
        const jobs = [...pending.values()];
        for (const job of jobs) {
          job.done();
          htmlToMarkdown(job.html, job.url).then(job.resolve, job.reject);
        }
        return;
      }
      for (const job of [...pending.values()]) {
        job.done();
        job.reject(
          new Error(
            `read_url could not convert ${job.url}: the page converter stopped (${reason}); the page may be too large or malformed.`,
          ),
        );
      }
    };
    worker.on("error", (error) => lost(error.message));
    worker.on("exit", (code) => lost(`exit code ${code}`));
    return current;
  };

  const post = (current: Running, job: Pending) => {
    current.worker.postMessage({ id: job.id, html: job.html, url: job.url } satisfies HtmlJob);
  };

  return {
    convert(html, url, signal) {
      if (signal?.aborted) return Promise.reject(abortError(signal));
      if (inThread) return htmlToMarkdown(html, url);
      return new Promise<PageText>((resolve, reject) => {
        const id = nextId++;
        const onAbort = () => {
          if (!pending.has(id)) return;
          job.done();
          reject(abortError(signal));
          // The worker may be in the middle of this page: it is ended, not waited for.
          restart();
          settleIdle();
        };
        const timer = setTimeout(() => {
          if (!pending.has(id)) return;
          job.done();
          reject(
            new Error(
              `read_url could not convert ${url}: the page took over ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`} to convert.`,
            ),
          );
          restart();
          settleIdle();
        }, timeoutMs);
        const job: Pending = {
          id,
          html,
          url,
          resolve,
          reject,
          done: () => {
            pending.delete(id);
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
          },
        };
        pending.set(id, job);
        signal?.addEventListener("abort", onAbort, { once: true });
        const current = running ?? start();
        post(current, job);
        settleIdle();
      });
    },
    warm() {
      if (inThread || running) return;
      start();
      settleIdle();
    },
    close: stop,
  };
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const error = new Error("read_url was aborted.");
  error.name = "AbortError";
  return error;
}

let shared: HtmlConverter | undefined;

/** The process's converter (one worker for every thread's read_url). */
export function sharedHtmlConverter(): HtmlConverter {
  shared ??= createHtmlConverter();
  return shared;
}
