import type { ThreadJson } from "../../api/threads.js";

// How the chat page words a thread's parts: its channel, state, times and figures.

/** The channel of a thread id: its adapter (`telegram:123:default` → telegram). */
export function channelOf(threadId: string): string {
  const colon = threadId.indexOf(":");
  return colon === -1 ? threadId : threadId.slice(0, colon);
}

/** A subagent's thread (`…~sub-<n>`): shown under its parent, never as a thread of its own. */
export const isSubagentThread = (threadId: string) => /~sub-[0-9]+$/.test(threadId);

/** The state as the page shows it: an unloaded thread ("inactive") is idle. */
export function stateLabel(t: Pick<ThreadJson, "state">): "idle" | "running" | "waiting" {
  return t.state === "inactive" ? "idle" : t.state;
}

/** "now", "5 min", "3 h", "2 d", then the date: how long ago `iso` was. */
export function relativeTime(iso: string | null, now = Date.now()): string {
  if (!iso) return "never";
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 45) return "now";
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${Math.round(s / 3600)} h`;
  if (s < 30 * 86_400) return `${Math.round(s / 86_400)} d`;
  return new Date(then).toLocaleDateString();
}

/** The exact local time of `iso`, for a title attribute. */
export function exactTime(iso: string | null): string | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

/** 12345 → "12.3k". */
export function tokenCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A cost in dollars, with the cents' fractions a small one needs. */
export function dollars(cost: number): string {
  if (cost === 0) return "$0";
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** A fresh thread id for the page's "New thread": `http:web:<random>`. */
export function newThreadId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `http:web:${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
