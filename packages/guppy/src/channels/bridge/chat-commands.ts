import type { Orchestrator, ThreadStatus } from "@guppy/core";

/** The chat commands, in the order /help lists them and Telegram's menu shows them. */
export const chatCommands = [
  { command: "start", description: "Start talking to guppy (/start <invite code> to join)" },
  { command: "new", description: "Archive this conversation and start fresh" },
  { command: "status", description: "Model, tokens in context, cost and queue" },
  { command: "stop", description: "Stop the running reply" },
  { command: "steer", description: "Redirect the running reply: /steer <text>" },
  { command: "compact", description: "Summarize older context to free space" },
  { command: "help", description: "List the commands" },
] as const;

export type ChatCommandName = (typeof chatCommands)[number]["command"];

const names = new Set<string>(chatCommands.map((c) => c.command));

/** `/name args` or `/name@bot args` → the command, or undefined when it is not one of ours. */
export function parseChatCommand(
  text: string,
): { command: ChatCommandName; args: string } | undefined {
  const m = /^\/([A-Za-z_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const command = (m[1] ?? "").toLowerCase();
  if (!names.has(command)) return undefined;
  return { command: command as ChatCommandName, args: (m[2] ?? "").trim() };
}

export function helpText(): string {
  return chatCommands.map((c) => `/${c.command} — ${c.description}`).join("\n");
}

function formatTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export function statusText(status: ThreadStatus): string {
  const pct =
    status.contextWindow > 0 ? Math.round((status.contextTokens / status.contextWindow) * 100) : 0;
  return [
    `Model: ${status.model}`,
    `Context: ${formatTokens(status.contextTokens)} / ${formatTokens(status.contextWindow)} tokens (${pct}%), ${status.messages} messages, ${status.compactions} compactions`,
    `Cost: $${status.cost.toFixed(4)}`,
    `State: ${status.state}, ${status.queued} queued`,
  ].join("\n");
}

/**
 * Runs a command that needs an admitted user (everything but /start and /help) and returns the
 * reply text — none for a `/new` the thread has handled already (its `messageId` delivered
 * again). What it does to the thread is done, or queued, before the first await. Never throws:
 * failures become a one-line reply.
 */
export async function runThreadCommand(
  orchestrator: Orchestrator,
  threadId: string,
  command: Exclude<ChatCommandName, "start" | "help">,
  args: string,
  messageId?: string,
): Promise<string | undefined> {
  try {
    switch (command) {
      case "new": {
        const result = await orchestrator.reset(threadId, messageId);
        if (result.status === "duplicate") return undefined;
        return result.archived
          ? "Started a new conversation (the previous one is archived)."
          : "Started a new conversation.";
      }
      case "status":
        return statusText(orchestrator.status(threadId));
      case "stop": {
        const result = orchestrator.send(threadId, { type: "abort" });
        return result.status === "refused" || result.status === "dropped"
          ? `Nothing stopped: ${result.reason}`
          : "Stopping.";
      }
      case "steer": {
        if (!args) return "Usage: /steer <text>";
        const result = orchestrator.send(threadId, { type: "steer", text: args });
        return result.status === "refused" || result.status === "dropped"
          ? `Not steered: ${result.reason}`
          : "Steering message sent.";
      }
      case "compact":
        return await orchestrator.compact(threadId);
    }
  } catch (error) {
    return `/${command} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
