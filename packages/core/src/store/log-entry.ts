/** One line of a thread's log.jsonl: the human-readable history (no tool results). */
export interface LogEntry {
  /** ISO 8601. */
  date: string;
  messageId: string;
  userId: string;
  userName: string;
  text: string;
  isBot: boolean;
  attachments?: Array<{ original: string; local: string }>;
}

export function isLogEntry(value: unknown): value is LogEntry {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.date === "string" && typeof v.text === "string" && typeof v.isBot === "boolean";
}
