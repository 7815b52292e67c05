import type { RunnerEvent, RunStopReason, ThreadEventInfo, ThreadStatus } from "@guppy/core";
import type { GatewayAddress } from "../channels/http/gateway-file.js";
import { totalsFromJson } from "../gateway/gateway-status.js";
import {
  createListeners,
  type PromptOutcome,
  type ThreadClient,
} from "../terminal/thread-client.js";

/** One Server-Sent Event: its name and its data parsed. */
interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * The chat's thread through the running gateway's HTTP API (docs/channels.md): prompts are
 * POST …/messages and queue behind the gateway's runs of the thread, the thread's events come
 * from GET …/events, Ctrl+C is POST …/abort, /new /compact /status their routes. Closing (or
 * killing) the chat leaves a run going: its answer stays in the thread. Resolves once the event
 * stream is open, so no event of the first prompt is missed.
 */
export async function attachToGateway(options: {
  gateway: GatewayAddress;
  token: string;
  threadId: string;
}): Promise<ThreadClient> {
  const { gateway, token, threadId } = options;
  const base = `${gateway.url}/v1/threads/${encodeURIComponent(threadId)}`;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: response.status, json };
  };
  const failure = (json: Record<string, unknown>, status: number) => {
    const error = json.error as { message?: unknown } | undefined;
    return typeof error?.message === "string" ? error.message : `HTTP ${status}`;
  };

  const listeners = createListeners();
  /** This client's prompts waiting for their run's end, by the gateway's id of the prompt. */
  const waiting = new Map<string, (outcome: PromptOutcome) => void>();
  /** Ends that came before their prompt's 202 (a quick run), by prompt id. */
  const early = new Map<string, PromptOutcome>();
  let running = false;
  const stream = new AbortController();
  const ended = (outcome: PromptOutcome) => {
    for (const resolve of waiting.values()) resolve(outcome);
    waiting.clear();
  };

  const onEvent = ({ event, data }: SseEvent) => {
    const s = (key: string) => (typeof data[key] === "string" ? (data[key] as string) : "");
    const runner = toRunnerEvent(event, data, threadId);
    if (runner) listeners.emit(runner);
    if (event === "notice") listeners.emit({ type: "notice", text: s("text") });
    if (event === "message") listeners.emit({ type: "message", text: s("text") });
    if (event === "start") running = true;
    if (runner?.type !== "run_end") return;
    running = false;
    const id = s("message_id");
    const { text, stopReason, errorMessage } = runner;
    const outcome: PromptOutcome = { text, stopReason, ...(errorMessage ? { errorMessage } : {}) };
    const resolve = waiting.get(id);
    waiting.delete(id);
    if (resolve) resolve(outcome);
    else early.set(id, outcome);
  };

  const response = await fetch(`${base}/events`, { headers, signal: stream.signal });
  if (!response.ok || !response.body) {
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    throw new Error(
      `guppy serve (pid ${gateway.pid}) at ${gateway.url} refused the chat: ${failure(json, response.status)}`,
    );
  }
  const ready = new Promise<void>((resolve, reject) => {
    readSse(response.body as ReadableStream<Uint8Array>, (e) => {
      if (e.event === "ready") resolve();
      else onEvent(e);
    }).then(
      () => {
        reject(new Error("the gateway closed the event stream"));
        if (!stream.signal.aborted) {
          listeners.emit({ type: "notice", text: "guppy serve stopped: this chat is detached." });
          ended({ text: "", stopReason: "error", errorMessage: "guppy serve stopped" });
        }
      },
      (error: unknown) => {
        reject(error);
        if (!stream.signal.aborted) {
          ended({ text: "", stopReason: "error", errorMessage: `guppy serve: ${String(error)}` });
        }
      },
    );
  });
  await ready;
  const first = await call("GET", "/status");
  const modelRef = typeof first.json.model === "string" ? first.json.model : "";

  return {
    threadId,
    modelRef,
    busy: () => running || waiting.size > 0,
    async prompt(text) {
      const refused = (message: string): PromptOutcome => {
        listeners.emit({ type: "error", kind: "internal", message });
        return { text: "", stopReason: "error", errorMessage: message };
      };
      let sent: Awaited<ReturnType<typeof call>>;
      try {
        sent = await call("POST", "/messages", { text, user: process.env.USER ?? "user" });
      } catch (error) {
        return refused(`guppy serve did not answer: ${String(error)}`);
      }
      if (sent.status !== 202 || typeof sent.json.id !== "string") {
        return refused(failure(sent.json, sent.status));
      }
      const id = sent.json.id;
      const done = early.get(id);
      early.delete(id);
      if (done) return done;
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    abort() {
      // 409 when the run has ended meanwhile: nothing to stop.
      call("POST", "/abort").catch(() => {});
    },
    subscribe: listeners.subscribe,
    async reset() {
      const { status, json } = await call("POST", "/new");
      if (status !== 200) throw new Error(failure(json, status));
      return typeof json.archived === "string" ? json.archived : undefined;
    },
    async compact() {
      const { status, json } = await call("POST", "/compact");
      if (status !== 200) throw new Error(failure(json, status));
      return String(json.report ?? "");
    },
    async status() {
      const { status, json } = await call("GET", "/status");
      if (status !== 200) throw new Error(failure(json, status));
      return threadStatus(json);
    },
    async close() {
      stream.abort();
    },
  };
}

/** The runner event an SSE event of the thread stands for (docs/channels.md), if any. */
function toRunnerEvent(
  event: string,
  data: Record<string, unknown>,
  threadId: string,
): RunnerEvent | undefined {
  const s = (key: string) => (typeof data[key] === "string" ? (data[key] as string) : "");
  switch (event) {
    case "start":
      return { type: "run_start", threadId, text: s("text") };
    case "text_delta":
      return { type: "text_delta", delta: s("delta") };
    case "tool_call":
      return { type: "tool_call", toolCallId: s("id"), name: s("name"), args: data.args };
    case "tool_result":
      return {
        type: "tool_result",
        toolCallId: s("id"),
        name: s("name"),
        isError: data.is_error === true,
        text: s("text"),
      };
    case "tool_output":
      return { type: "tool_output", toolCallId: s("id"), name: s("name"), text: s("text") };
    case "error":
      return {
        type: "error",
        kind: data.kind === "provider" || data.kind === "tool_rounds" ? data.kind : "internal",
        message: s("message"),
      };
    case "final":
      return {
        type: "run_end",
        text: s("text"),
        stopReason: (s("stop_reason") || "error") as RunStopReason,
        ...(typeof data.error === "string" ? { errorMessage: data.error } : {}),
        // Posted already by the run's send_message (shown as its `message`): shown once.
        ...(data.delivered === true ? { delivered: true as const } : {}),
      };
    default:
      return undefined;
  }
}

/** One of GET …/status's `events` as the orchestrator's ThreadEventInfo. */
function eventInfo(value: unknown): ThreadEventInfo {
  const e = (value ?? {}) as Record<string, unknown>;
  return {
    id: String(e.id ?? ""),
    type: (e.type as ThreadEventInfo["type"]) ?? "periodic",
    ...(typeof e.schedule === "string" ? { schedule: e.schedule } : {}),
    ...(typeof e.next_run === "string" ? { nextRun: e.next_run } : {}),
  };
}

/** GET …/status's answer as the orchestrator's ThreadStatus. */
function threadStatus(json: Record<string, unknown>): ThreadStatus {
  const n = (value: unknown) => (typeof value === "number" ? value : 0);
  const tokens = (json.tokens ?? {}) as Record<string, unknown>;
  const usage = json.last_usage as Record<string, unknown> | null | undefined;
  const ledger = json.usage as Record<string, unknown> | null | undefined;
  return {
    threadId: String(json.id ?? ""),
    state: (json.state as ThreadStatus["state"]) ?? "inactive",
    queued: n(json.queued),
    ...(typeof json.last_activity === "string" ? { lastActivity: json.last_activity } : {}),
    model: String(json.model ?? ""),
    messages: n(json.messages),
    contextTokens: n(tokens.context),
    contextWindow: n(tokens.context_window),
    compactions: n(json.compactions),
    ...(n(json.compaction_fallbacks) > 0
      ? { compactionFallbacks: n(json.compaction_fallbacks) }
      : {}),
    cost: n(json.cost),
    ...(typeof json.sandbox === "string" ? { sandbox: json.sandbox } : {}),
    ...(Array.isArray(json.events) ? { events: json.events.map(eventInfo) } : {}),
    ...(ledger
      ? { usage: { thread: totalsFromJson(ledger.thread), today: totalsFromJson(ledger.today) } }
      : {}),
    ...(usage
      ? {
          lastUsage: {
            input: n(usage.input),
            output: n(usage.output),
            cacheRead: n(usage.cache_read),
            cacheWrite: n(usage.cache_write),
            totalTokens: n(usage.input) + n(usage.output),
            cost: {
              input: 0,
              output: 0,
              cacheRead: 0,
              cacheWrite: 0,
              total: n(usage.cost),
            },
          },
        }
      : {}),
  };
}

/**
 * Reads a Server-Sent Events body to its end, handing each event to `onEvent`. Written here
 * (a dozen lines) rather than a dependency: guppy's own stream has one `event:` and one `data:`
 * line per event, and comment lines for keep-alive.
 */
async function readSse(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: SseEvent) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? "message";
      const data = /^data: ?(.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      try {
        onEvent({ event, data: JSON.parse(data) as Record<string, unknown> });
      } catch {
        // Not guppy's JSON: skipped.
      }
    }
  }
}
