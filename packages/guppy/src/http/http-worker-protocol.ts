import type { MessagePort } from "node:worker_threads";

/** What the HTTP worker (http-worker.ts) starts with. */
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
