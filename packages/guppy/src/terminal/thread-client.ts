import type { RunnerEvent, RunStopReason, ThreadStatus } from "@guppy/core";

/**
 * What the terminal shows of its thread: a run's events, guppy's own notices, and messages guppy
 * posted to the thread outside an answer (send_message).
 */
export type ThreadClientEvent =
  | RunnerEvent
  | { type: "notice"; text: string }
  | { type: "message"; text: string };

/** How a prompt's run ended (a prompt the thread did not take: "error", with the reason). */
export interface PromptOutcome {
  text: string;
  stopReason: RunStopReason;
  errorMessage?: string;
}

/**
 * The thread of `guppy chat`, however it runs: through an orchestrator in this process (no
 * gateway on the home: commands/chat-local-thread.ts) or through the running gateway's HTTP
 * API (commands/chat-gateway-thread.ts). The terminal talks to nothing else.
 */
export interface ThreadClient {
  readonly threadId: string;
  /** provider/model-id the thread answers with. */
  readonly modelRef: string;
  /** A run of the thread is under way, or a prompt of this client waits for one: Ctrl+C aborts. */
  busy(): boolean;
  /** Queues a prompt behind the thread's runs; resolves once its run ended. */
  prompt(text: string): Promise<PromptOutcome>;
  /** Aborts the thread's running turn (its tool commands killed); queued prompts still run. */
  abort(): void;
  /** Every event of the thread, whoever sent the prompt. */
  subscribe(listener: (event: ThreadClientEvent) => void): () => void;
  /** `/new`: resolves to where the old context was archived, if there was one. */
  reset(): Promise<string | undefined>;
  /** `/compact`: resolves to a one-line report. */
  compact(): Promise<string>;
  status(): Promise<ThreadStatus>;
  /** Lets go of the thread (runs of an attached chat go on in the gateway). */
  close(): Promise<void>;
}

/** A fan-out of the client's events to its subscribers (a throwing one does not stop the rest). */
export function createListeners(): {
  emit(event: ThreadClientEvent): void;
  subscribe: ThreadClient["subscribe"];
} {
  const listeners = new Set<(event: ThreadClientEvent) => void>();
  return {
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // The terminal's rendering failing must not lose the run's end.
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
