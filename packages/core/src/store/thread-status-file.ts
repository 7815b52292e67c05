import type { Usage } from "@mariozechner/pi-ai";
import type { RunnerStats, SavedThreadStatus, ThreadFigures } from "../types.js";

// The format of a thread's status.json (THREAD_STATUS_FILE).

/** A runner's figures, as status.json keeps them. */
export function threadFigures(stats: RunnerStats): ThreadFigures {
  return {
    messages: stats.messages,
    contextTokens: stats.context.tokens,
    contextWindow: stats.context.window,
    cost: stats.totals.cost,
    compactions: stats.context.compactions,
    ...(stats.context.fallbacks > 0 ? { compactionFallbacks: stats.context.fallbacks } : {}),
    ...(stats.lastUsage ? { lastUsage: stats.lastUsage } : {}),
  };
}

const NUMBER_FIELDS = [
  "messages",
  "contextTokens",
  "contextWindow",
  "compactions",
  "cost",
] as const;

/** The saved status in `text`, or undefined when it is not one (torn, edited, another version). */
export function parseSavedStatus(text: string): SavedThreadStatus | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.lastActivity !== "string" || Number.isNaN(Date.parse(v.lastActivity))) {
    return undefined;
  }
  for (const field of NUMBER_FIELDS) {
    if (typeof v[field] !== "number" || !Number.isFinite(v[field])) return undefined;
  }
  const usage = v.lastUsage as Record<string, unknown> | undefined;
  const usable =
    usage !== null &&
    typeof usage === "object" &&
    typeof usage.input === "number" &&
    typeof usage.output === "number";
  return {
    lastActivity: v.lastActivity,
    messages: v.messages as number,
    contextTokens: v.contextTokens as number,
    contextWindow: v.contextWindow as number,
    compactions: v.compactions as number,
    ...(typeof v.compactionFallbacks === "number"
      ? { compactionFallbacks: v.compactionFallbacks }
      : {}),
    cost: v.cost as number,
    ...(usable ? { lastUsage: usage as unknown as Usage } : {}),
  };
}
