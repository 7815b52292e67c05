import { join } from "node:path";
import { MessageChannel, Worker } from "node:worker_threads";
import type { Logger } from "@guppy/core";
import { EVENTS_DIR } from "@guppy/core/events";
import { readUsageReport } from "@guppy/core/usage";
import type { GatewayChannel, GatewayContext } from "../channel.js";
import { type HttpConfig, resolveApiToken } from "./api-token.js";
import { serveBackend } from "./backend-rpc.js";
import { localUrl } from "./gateway-file.js";
import { createLocalBackend, type HttpBackend } from "./http-backend.js";
import type { HttpWorkerData, HttpWorkerReport } from "./http-worker.js";

/** Past this many unexpected worker exits within a minute, the HTTP API stays down (logged). */
const MAX_RESTARTS_PER_MINUTE = 5;
/** How long stop() waits for the worker to close its connections before terminating it. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * The HTTP API as a gateway channel: Hono on @hono/node-server in a worker thread
 * (http-worker.ts), so parsing, auth, routing and answers do not run on the agents' thread; its
 * calls on the orchestrator come back here as messages (backend-rpc.ts). Threads
 * `http:<user>:<thread>`.
 */
export function createHttpChannel(
  options: {
    /** The worker's module (tests: a stand-in); default http-worker.js beside this file. */
    workerUrl?: URL;
  } = {},
): GatewayChannel<HttpConfig> {
  const workerUrl = options.workerUrl ?? new URL("./http-worker.js", import.meta.url);
  let current: RunningWorker | undefined;
  let stopping = false;
  return {
    name: "http",
    async start(context: GatewayContext<HttpConfig>) {
      const { config, orchestrator, store, logger } = context;
      const say = context.say ?? ((text: string) => logger.info(text));
      const token = resolveApiToken(config);
      if (token.source === "generated") {
        say(
          `HTTP API token generated and saved to ${token.path} (mode 600); read it with: cat ${token.path}`,
        );
      }
      orchestrator.registerChannel({
        adapterId: "http",
        // Replies of HTTP threads are read from the event stream or GET /v1/threads/{id}/messages.
        threadHandle: (threadId) => ({ threadId, notice: () => {} }),
      });
      const backend = createLocalBackend({
        orchestrator,
        store,
        ...(context.subscribe ? { subscribe: context.subscribe } : {}),
        ...(context.gatewayStatus ? { gatewayStatus: context.gatewayStatus } : {}),
        // One pass over <home>/usage.jsonl per GET /v1/usage.
        usageReport: (request) =>
          readUsageReport({ home: config.home, timeZone: config.timezone, ...request }),
        events: {
          dir: join(config.home, EVENTS_DIR),
          ...(config.timezone !== undefined ? { timezone: config.timezone } : {}),
        },
        ...(context.access ? { access: context.access } : {}),
      });
      const data: Omit<HttpWorkerData, "backend"> = {
        home: config.home,
        host: config.httpHost,
        port: config.httpPort,
        token: token.token,
        tokenHint: token.path ? `it is stored in ${token.path}` : `it is ${token.origin}`,
        modelName: config.model ?? "guppy",
        events: context.subscribe !== undefined,
      };
      const exits: number[] = [];
      const onExit = (code: number) => {
        if (stopping) return;
        const now = Date.now();
        exits.push(now);
        while (exits.length > 0 && (exits[0] ?? now) < now - 60_000) exits.shift();
        if (exits.length > MAX_RESTARTS_PER_MINUTE) {
          logger.error("The HTTP API worker keeps exiting; the HTTP API is down", { code });
          return;
        }
        logger.error("The HTTP API worker exited; starting it again", { code });
        startWorker(workerUrl, backend, data, logger, onExit).then(
          (worker) => {
            current = worker;
          },
          (error: Error) => logger.error(`The HTTP API did not restart: ${error.message}`),
        );
      };
      current = await startWorker(workerUrl, backend, data, logger, onExit);
      // A restarted worker listens on the same port, even when the first one chose it.
      data.port = current.port;
      const host = current.address.includes(":") ? `[${current.address}]` : current.address;
      say(`HTTP API listening on http://${host}:${current.port}`);
      context.listening?.(localUrl(current.address, current.port));
      logger.info("HTTP API listening", { host: current.address, port: current.port });
    },
    async stop() {
      stopping = true;
      const worker = current;
      current = undefined;
      await worker?.stop();
    },
  };
}

interface RunningWorker {
  address: string;
  port: number;
  /** Closes the server (open streams end, running answers get through), then the thread. */
  stop(): Promise<void>;
}

/** Starts the worker and resolves once it listens (rejects with its one-line reason). */
function startWorker(
  url: URL,
  backend: HttpBackend,
  data: Omit<HttpWorkerData, "backend">,
  logger: Logger,
  onExit: (code: number) => void,
): Promise<RunningWorker> {
  const { port1, port2 } = new MessageChannel();
  const workerData: HttpWorkerData = { ...data, backend: port2 };
  // No execArgv: preloads given to the gateway (--import, --require) are not the worker's.
  const worker = new Worker(url, {
    workerData,
    transferList: [port2],
    execArgv: [],
  });
  const stopServing = serveBackend(port1, backend);
  let stopped: (() => void) | undefined;
  let exited = false;
  const release = () => {
    exited = true;
    stopped?.();
    stopServing();
    port1.close();
  };
  return new Promise((resolve, reject) => {
    let listening = false;
    worker.on("message", (report: HttpWorkerReport) => {
      switch (report.type) {
        case "listening":
          listening = true;
          resolve({
            address: report.address,
            port: report.port,
            async stop() {
              if (exited) return;
              // Resolved by the worker's "stopped", or by its exit.
              const done = new Promise<void>((r) => {
                stopped = r;
              });
              worker.postMessage({ type: "stop" });
              await Promise.race([
                done,
                new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS).unref()),
              ]);
              await worker.terminate();
            },
          });
          return;
        case "failed":
          reject(new Error(report.message));
          void worker.terminate();
          return;
        case "stopped":
          stopped?.();
          return;
        case "error":
          logger.error("Unhandled error in the HTTP API worker (it keeps serving)", {
            error: report.message,
          });
          return;
        case "log":
          logger.error(report.message);
          return;
      }
    });
    worker.on("error", (error) => {
      if (!listening) reject(new Error(`the HTTP API worker failed to start: ${error.message}`));
      else logger.error("The HTTP API worker failed", { error: error.stack ?? error.message });
    });
    worker.on("exit", (code) => {
      release();
      if (!listening)
        reject(new Error(`the HTTP API worker exited (code ${code}) before listening`));
      else onExit(code);
    });
  });
}
