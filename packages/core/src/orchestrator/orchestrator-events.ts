import type { RunnerEvent } from "../runner/runner-events.js";

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
