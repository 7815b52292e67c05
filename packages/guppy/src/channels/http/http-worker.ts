import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { createIdleCollector } from "../../gateway/idle-collect.js";
import { createRemoteBackend } from "./backend-rpc.js";
import { loadControlUi } from "./control-ui.js";
import { createHttpApp } from "./create-http-app.js";
import { closeHttp, type Listening, listenHttp } from "./listen-http.js";
import { HTTP_THREAD_NICENESS, lowerThreadPriority } from "./thread-priority.js";

/** What the worker starts with (http-channel.ts gives it). */
export interface HttpWorkerData {
  /** GUPPY_HOME: the worker lists the thread directories itself. */
  home: string;
  host: string;
  port: number;
  token: string;
  /** Where the token is stored, for the 401 message. */
  tokenHint: string;
  modelName: string;
  /** The gateway has an event stream (GET /v1/threads/{id}/events). */
  events: boolean;
  /** The backend calls' port (backend-rpc.ts); the worker's parentPort carries the lifecycle. */
  backend: MessagePort;
}

/** Main → worker. */
export type HttpWorkerCommand = { type: "stop" };

/** Worker → main. */
export type HttpWorkerReport =
  | { type: "listening"; address: string; port: number }
  | { type: "failed"; message: string }
  | { type: "stopped" }
  /** An unhandled rejection or exception in the worker: logged by the gateway, not fatal. */
  | { type: "error"; message: string }
  /** A failure the worker handled but no client was told of (an answer it could not write). */
  | { type: "log"; message: string };

/**
 * The HTTP API's worker thread (started by http-channel.ts): it parses requests, checks tokens,
 * routes and writes answers, so none of that runs on the thread of the agents; each route's call
 * on the orchestrator is a message to the main thread (backend-rpc.ts).
 */
const port = parentPort;
if (!port) throw new Error("http-worker.js runs as a worker thread of guppy serve");
// On busy cores the agents' thread goes first (thread-priority.ts).
lowerThreadPriority(HTTP_THREAD_NICENESS);
const data = workerData as HttpWorkerData;
const report = (message: HttpWorkerReport) => port.postMessage(message);
const describe = (error: unknown) =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);
process.on("unhandledRejection", (reason) => report({ type: "error", message: describe(reason) }));
process.on("uncaughtException", (error) => report({ type: "error", message: describe(error) }));

const streams = new Set<() => void>();
const app = createHttpApp({
  backend: createRemoteBackend(data.backend, { events: data.events, home: data.home }),
  token: data.token,
  tokenHint: data.tokenHint,
  modelName: data.modelName,
  ui: loadControlUi(),
  log: (message) => report({ type: "log", message }),
  onStream: (close) => {
    streams.add(close);
    return () => streams.delete(close);
  },
});

/** How long the API is quiet before its heap is collected once (idle-collect.ts). */
const QUIET_MS = 5_000;
const collector = createIdleCollector(QUIET_MS);

let server: Listening | undefined;
listenHttp(app, data.host, data.port, { log: (message) => report({ type: "log", message }) }).then(
  (listening) => {
    server = listening;
    listening.server.on("request", collector.touch);
    report({ type: "listening", address: listening.address, port: listening.port });
  },
  (error: Error) => report({ type: "failed", message: error.message }),
);

port.on("message", (command: HttpWorkerCommand) => {
  if (command.type !== "stop") return;
  collector.stop();
  for (const close of streams) close();
  const closing = server ? closeHttp(server) : Promise.resolve();
  server = undefined;
  closing.then(() => report({ type: "stopped" }));
});
