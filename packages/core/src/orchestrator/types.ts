// The orchestrator's own types: what it reports and counts, and the interface `guppy serve` uses.
import type { Orchestrator, RunnerEvent } from "../types.js";

/** What the orchestrator reports about its threads (gateway logs, the HTTP API's SSE stream). */
export type OrchestratorEvent =
  | { type: "runner"; threadId: string; inboxId: string; event: RunnerEvent }
  | { type: "queued"; threadId: string; inboxId: string; position: number }
  | { type: "busy"; threadId: string; queued: number }
  | { type: "activated"; threadId: string }
  | { type: "deactivated"; threadId: string }
  | { type: "steered"; threadId: string; delivered: boolean }
  | { type: "aborted"; threadId: string; delivered: boolean }
  | { type: "notice"; threadId: string; text: string }
  /** guppy posted a message to the thread outside an answer (`postMessage`). */
  | { type: "message"; threadId: string; text: string; from?: string }
  | { type: "backfilled"; threadId: string; count: number }
  | { type: "replayed"; threadId: string; inboxId: string; action: "rerun" | "reported" };

export type OrchestratorListener = (event: OrchestratorEvent) => void;

/** Counters since start, for logs and the bench. */
export interface OrchestratorCounters {
  accepted: number;
  busy: number;
  runs: number;
  replayed: number;
  reported: number;
  activeActors: number;
  loadedRunners: number;
  runningNow: number;
  waitingForSlot: number;
}

/** The orchestrator as `guppy serve` uses it: the contract plus events and counters. */
export interface RuntimeOrchestrator extends Orchestrator {
  subscribe(listener: OrchestratorListener): () => void;
  counters(): OrchestratorCounters;
}
