import { get, seg } from "./client.js";

// GET /v1/threads/{id}/tools (docs/channels.md "HTTP API"): the tool calls still in a thread's
// context; older ones are in its compaction summary.

export interface ContextToolJson {
  id: string;
  name: string;
  args: unknown;
  /** Cut at 2,000 characters (`result_truncated`); null while the call has no result. */
  result: string | null;
  result_truncated: boolean;
  is_error: boolean;
  date: string | null;
  /** The user message the call follows, cut short. */
  prompt: string | null;
}

export interface ContextToolsJson {
  thread_id: string;
  compacted: boolean;
  tools: ContextToolJson[];
}

export const contextTools = (id: string) => get<ContextToolsJson>(`/v1/threads/${seg(id)}/tools`);
