import type { AgentMessage } from "@mariozechner/pi-agent-core";

type Role = "user" | "assistant" | "toolResult" | string;
const roleOf = (m: AgentMessage): Role => (m as { role: string }).role;

function callIds(m: AgentMessage): string[] {
  if (roleOf(m) !== "assistant") return [];
  const content = (m as { content?: unknown }).content;
  if (!Array.isArray(content)) return [];
  return content
    .filter((b): b is { type: "toolCall"; id: string } => b?.type === "toolCall")
    .map((b) => b.id);
}

/**
 * Indices where the history may be cut: everything before index i can be removed without
 * separating a tool call from its results or leaving a result without its call. A cut point
 * starts a user message or an assistant message (never a tool result) and no call made before
 * it is answered after it. Index 0 and `messages.length` are always valid.
 */
export function cutPoints(messages: readonly AgentMessage[]): boolean[] {
  const valid = new Array<boolean>(messages.length + 1).fill(false);
  valid[0] = true;
  valid[messages.length] = true;
  // Calls made so far whose results have not been seen yet.
  const open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const role = roleOf(m);
    if (i > 0 && role !== "toolResult" && open.size === 0) valid[i] = true;
    if (role === "user") open.clear(); // an unanswered call before a user turn is an orphan anyway
    if (role === "assistant") {
      open.clear();
      for (const id of callIds(m)) open.add(id);
    }
    if (role === "toolResult") open.delete((m as { toolCallId: string }).toolCallId);
  }
  // Conservative: an index right after calls still waiting for results is never a cut point,
  // even when the results never come (repair-pairing deals with those).
  return valid;
}

/**
 * The cut for a compaction: the earliest valid index whose suffix fits in `keepTokens`, so the
 * most recent messages are kept verbatim; if even the last group is larger, the latest valid
 * index before the end (the smallest possible suffix). Returns 0 when nothing can be removed.
 */
export function chooseCut(
  messages: readonly AgentMessage[],
  tokens: readonly number[],
  keepTokens: number,
): number {
  const n = messages.length;
  if (n === 0) return 0;
  const valid = cutPoints(messages);
  let suffix = 0;
  let best = -1;
  let latest = -1;
  for (let i = n - 1; i >= 1; i--) {
    suffix += tokens[i] ?? 0;
    if (!valid[i]) continue;
    if (latest === -1) latest = i;
    if (suffix <= keepTokens) best = i;
    else break;
  }
  if (best !== -1) return best;
  return latest === -1 ? 0 : latest;
}
