import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { UserMessage } from "@mariozechner/pi-ai";
import type { CompactionMessage } from "./types.js";

declare module "@mariozechner/pi-agent-core" {
  interface CustomAgentMessages {
    compaction: CompactionMessage;
  }
}

export function isCompactionMessage(m: AgentMessage | undefined): m is CompactionMessage {
  return m !== undefined && (m as { role: string }).role === "compaction";
}

/** What the model sees in place of a compaction message. */
export function compactionToUser(m: CompactionMessage): UserMessage {
  const head =
    m.method === "summary"
      ? "[Summary of the earlier conversation, written when the context was compacted. Treat it as what happened before the messages that follow.]"
      : `[Earlier messages were dropped to fit the context window (${m.removedMessages} in the last drop; the summary request failed).${
          m.summary ? " The summary from before the drop follows." : ""
        }]`;
  return {
    role: "user",
    content: [{ type: "text", text: m.summary ? `${head}\n\n${m.summary}` : head }],
    timestamp: m.timestamp,
  };
}
