import type { ContextRecord } from "@guppy/core/state";
import type { Context } from "hono";
import type { HttpBackend } from "./http-backend.js";

// GET /v1/threads/{id}/tools: the tool calls still in a thread's context, read in the HTTP worker
// through the state seam. The log has no tool calls; older ones than the context holds live on
// only in its compaction summary.

/** Characters of a tool's result (and of each string in its arguments) the route gives. */
export const TOOL_TEXT_LIMIT = 2000;
/** Characters of the user message a call follows. */
const PROMPT_LIMIT = 300;

/** A tool call of the context, as the route gives it. */
export interface ContextToolJson {
  id: string;
  name: string;
  args: unknown;
  /** The result's text, cut at TOOL_TEXT_LIMIT characters; null while no result is stored. */
  result: string | null;
  result_truncated: boolean;
  is_error: boolean;
  /** When the model asked for it (ISO 8601), if the message says. */
  date: string | null;
  /** The user message it follows (a prompt or a steer), cut short; null if none precedes it. */
  prompt: string | null;
}

export interface ContextToolsJson {
  thread_id: string;
  /** The context begins with a compaction: older calls are in its summary. */
  compacted: boolean;
  tools: ContextToolJson[];
}

/** Only what is read of a context line (an AgentMessage): anything else is passed over. */
interface ContextLine {
  role?: unknown;
  content?: unknown;
  timestamp?: unknown;
  toolCallId?: unknown;
  isError?: unknown;
}

const cut = (text: string, limit: number) =>
  text.length > limit ? `${text.slice(0, limit)}…` : text;

/** The text parts of a message's content (a string or an array of parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: { type?: unknown; text?: unknown } | null) =>
      p && typeof p === "object" && p.type === "text" ? String(p.text ?? "") : "",
    )
    .join("");
}

/** Arguments with each long string cut, so one `write` of a large file does not swell the page. */
function cutArgs(value: unknown): unknown {
  if (typeof value === "string") return cut(value, TOOL_TEXT_LIMIT);
  if (Array.isArray(value)) return value.map(cutArgs);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutArgs(v)]));
  }
  return value;
}

/** The tool calls of a context's messages, oldest first, each with its result when stored. */
export function contextTools(
  threadId: string,
  records: readonly ContextRecord[],
): ContextToolsJson {
  const tools: ContextToolJson[] = [];
  const byId = new Map<string, ContextToolJson>();
  let prompt: string | null = null;
  let compacted = false;
  let first = true;
  for (const record of records) {
    const message = record as ContextLine;
    if (first) compacted = message.role === "compaction";
    first = false;
    if (message.role === "user") prompt = cut(textOf(message.content), PROMPT_LIMIT);
    else if (message.role === "assistant" && Array.isArray(message.content)) {
      const date =
        typeof message.timestamp === "number" ? new Date(message.timestamp).toISOString() : null;
      for (const part of message.content as Array<Record<string, unknown> | null>) {
        if (!part || typeof part !== "object" || part.type !== "toolCall") continue;
        const call: ContextToolJson = {
          id: String(part.id ?? ""),
          name: String(part.name ?? ""),
          args: cutArgs(part.arguments ?? {}),
          result: null,
          result_truncated: false,
          is_error: false,
          date,
          prompt,
        };
        tools.push(call);
        byId.set(call.id, call);
      }
    } else if (message.role === "toolResult" && typeof message.toolCallId === "string") {
      const call = byId.get(message.toolCallId);
      if (!call) continue;
      const result = textOf(message.content);
      call.result = cut(result, TOOL_TEXT_LIMIT);
      call.result_truncated = result.length > TOOL_TEXT_LIMIT;
      call.is_error = message.isError === true;
    }
  }
  return { thread_id: threadId, compacted, tools };
}

/** GET /v1/threads/{id}/tools of a known thread `id` (one with no context: no tools). */
export async function contextToolsRoute(
  c: Context,
  backend: HttpBackend,
  id: string,
): Promise<Response> {
  return c.json(contextTools(id, await backend.log.readContext(id)));
}
