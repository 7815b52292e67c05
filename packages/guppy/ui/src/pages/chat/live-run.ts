import type { ThreadEvent } from "../../api/thread-events.js";

// What the live part of a thread shows, built from its events stream: the run under way (its
// prompt, the answer's text and tool calls in the order they came), the prompts queued, and
// one-line notices.

export type RunItem =
  | { kind: "text"; text: string }
  | {
      kind: "tool";
      id: string;
      name: string;
      args: unknown;
      output?: string;
      result?: string;
      isError?: boolean;
    };

export interface LiveRun {
  /** The prompt's id in the gateway (empty when the run was under way before the stream). */
  messageId: string;
  prompt: string;
  items: RunItem[];
  /** Set by `final`: the run is over and waits to be cleared once the messages show it. */
  ended?: { stopReason: string; error: string | null };
}

export interface LiveLine {
  key: number;
  kind: "notice" | "message" | "error" | "report";
  text: string;
}

export interface LiveState {
  run?: LiveRun;
  running: boolean;
  /** Prompts accepted and not started yet. */
  queued: number;
  lines: LiveLine[];
  nextKey: number;
}

export type LiveAction =
  | { type: "event"; event: ThreadEvent }
  /** The thread's status, read at load, after a gap and after each run. */
  | { type: "status"; running: boolean; queued: number }
  | { type: "line"; kind: LiveLine["kind"]; text: string }
  /** The messages have the ended run `run`: the live part lets it go. */
  | { type: "clear"; run: LiveRun };

export const initialLive: LiveState = { running: false, queued: 0, lines: [], nextKey: 1 };

/** The most one-line notices kept on screen. */
const MAX_LINES = 4;

function addLine(state: LiveState, kind: LiveLine["kind"], text: string): LiveState {
  const lines = [...state.lines, { key: state.nextKey, kind, text }].slice(-MAX_LINES);
  return { ...state, lines, nextKey: state.nextKey + 1 };
}

/** The run, with `change` made to it (a run under way is made up if the stream began mid-run). */
function withRun(state: LiveState, change: (run: LiveRun) => LiveRun): LiveState {
  const run = state.run && !state.run.ended ? state.run : { messageId: "", prompt: "", items: [] };
  return { ...state, run: change(run), running: true };
}

function updateTool(
  run: LiveRun,
  id: string,
  change: (item: RunItem & { kind: "tool" }) => RunItem,
) {
  return {
    ...run,
    items: run.items.map((item) => (item.kind === "tool" && item.id === id ? change(item) : item)),
  };
}

export function liveReducer(state: LiveState, action: LiveAction): LiveState {
  switch (action.type) {
    case "status":
      // The events know better than a status read that may have crossed them: a run seen to
      // start runs until its `final`, and one seen to end is over.
      return {
        ...state,
        running: state.run ? !state.run.ended : action.running,
        queued: action.queued,
      };
    case "line":
      return addLine(state, action.kind, action.text);
    case "clear":
      return state.run === action.run ? { ...state, run: undefined } : state;
    case "event":
      return onEvent(state, action.event);
  }
}

function onEvent(state: LiveState, event: ThreadEvent): LiveState {
  switch (event.type) {
    case "start":
      return {
        ...state,
        run: { messageId: event.message_id, prompt: event.text, items: [] },
        running: true,
        queued: Math.max(0, state.queued - 1),
        lines: [],
      };
    case "text_delta":
      return withRun(state, (run) => {
        const last = run.items.at(-1);
        const items =
          last?.kind === "text"
            ? [...run.items.slice(0, -1), { kind: "text" as const, text: last.text + event.delta }]
            : [...run.items, { kind: "text" as const, text: event.delta }];
        return { ...run, items };
      });
    case "tool_call":
      return withRun(state, (run) => ({
        ...run,
        items: [...run.items, { kind: "tool", id: event.id, name: event.name, args: event.args }],
      }));
    case "tool_output":
      return withRun(state, (run) =>
        updateTool(run, event.id, (item) => ({ ...item, output: event.text })),
      );
    case "tool_result":
      return withRun(state, (run) =>
        updateTool(run, event.id, (item) => ({
          ...item,
          result: event.text,
          isError: event.is_error,
        })),
      );
    case "error":
      return addLine(state, "error", event.message);
    case "final": {
      const run = state.run && !state.run.ended ? state.run : undefined;
      const hasText = run?.items.some((i) => i.kind === "text") ?? false;
      // Deltas missed (the stream opened late): the final text is the whole answer.
      const items =
        run && !hasText && event.text && !event.delivered
          ? [...run.items, { kind: "text" as const, text: event.text }]
          : (run?.items ?? []);
      const ended = { stopReason: event.stop_reason, error: event.error };
      let next: LiveState = {
        ...state,
        running: false,
        run: run ? { ...run, items, ended } : undefined,
      };
      if (event.stop_reason === "aborted") next = addLine(next, "notice", "Stopped.");
      else if (event.error) next = addLine(next, "error", event.error);
      return next;
    }
    case "notice":
      return addLine(state, "notice", event.text);
    case "message":
      return addLine(state, "message", event.from ? `${event.from}: ${event.text}` : event.text);
    case "queued":
      return { ...state, queued: state.queued + 1 };
    case "busy":
      return addLine(
        { ...state, queued: event.queued },
        "notice",
        `Busy: ${event.queued} prompts queued; a message was turned away.`,
      );
    case "overflow":
      return addLine(state, "notice", "The live view fell behind; reloading the thread.");
    case "ready":
      return state;
  }
}
