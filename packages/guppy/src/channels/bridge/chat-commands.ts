import type { Orchestrator, Role, ThreadHandle, ThreadStatus } from "@guppy/core";
import { eventLine, lastActivityText, totalsText } from "../../terminal/status-text.js";

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

/** A message that starts with a slash command, as guppy takes it. */
export type ParsedCommand =
  | { kind: "command"; command: ChatCommandName; args: string }
  /** `/word@otherbot`: addressed to another bot in the chat — nothing for guppy to do. */
  | { kind: "other-bot"; bot: string };

/**
 * `/name args` or `/name@bot args`: one of guppy's commands when it is bare or names this bot
 * (`botUserName`, case-insensitively); a command for another bot when it names one; otherwise
 * undefined (not a command of guppy's: ordinary text).
 */
export function parseChatCommand(text: string, botUserName: string): ParsedCommand | undefined {
  const m = /^\/([A-Za-z0-9_]+)(?:@(\S+))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const bot = m[2];
  if (bot !== undefined && bot.toLowerCase() !== botUserName.toLowerCase()) {
    return { kind: "other-bot", bot };
  }
  const command = (m[1] ?? "").toLowerCase();
  if (!names.has(command)) return undefined;
  return { kind: "command", command: command as ChatCommandName, args: (m[3] ?? "").trim() };
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
    ...(status.usage
      ? [
          `Thread total (across /new): ${totalsText(status.usage.thread)}`,
          `Today (all threads): ${totalsText(status.usage.today)}`,
        ]
      : []),
    `State: ${status.state}, ${status.queued} queued`,
    `Last activity: ${lastActivityText(status.lastActivity)}`,
    ...(status.sandbox ? [`Sandbox: ${status.sandbox}`] : []),
    ...(status.subagents && status.subagents.length > 0
      ? [
          `Subagents: ${status.subagents.map((c) => `${c.id}${c.label ? ` "${c.label}"` : ""} ${c.state}`).join(", ")}`,
        ]
      : []),
    ...(status.events ?? []).map((e) => `Event: ${eventLine(e)}`),
  ].join("\n");
}

/**
 * Runs a command that needs an admitted user (everything but /start and /help) and returns the
 * reply text — none for a `/new`, `/stop`, `/steer` or `/compact` the thread has handled already
 * (its `messageId` delivered again: the orchestrator drops it) or a `/steer` with nothing running
 * (the orchestrator's notice says so). What it does to the thread is done, or queued, before the
 * first await. Never throws: failures become a one-line reply.
 */
export async function runThreadCommand(
  orchestrator: Orchestrator,
  threadId: string,
  command: Exclude<ChatCommandName, "start" | "help">,
  args: string,
  /** The message's id, and its sender's role (a `/steer` carries it: a guest's cannot redirect an owner's run). */
  sender: {
    messageId?: string;
    role: Role;
    /** Where a `/steer`'s "nothing to steer" goes (to its sender alone where the channel can). */
    thread?: ThreadHandle;
  },
): Promise<string | undefined> {
  const { messageId, role } = sender;
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
        const result = orchestrator.send(threadId, {
          type: "abort",
          ...(messageId ? { messageId } : {}),
        });
        if (result.status === "duplicate") return undefined;
        return result.status === "refused" || result.status === "dropped"
          ? `Nothing stopped: ${result.reason}`
          : "Stopping.";
      }
      case "steer": {
        if (!args) return "Usage: /steer <text>";
        const result = orchestrator.send(threadId, {
          type: "steer",
          text: args,
          role,
          ...(messageId ? { messageId } : {}),
          ...(sender.thread ? { thread: sender.thread } : {}),
        });
        // Dropped (nothing runs): the orchestrator has told the thread so itself.
        if (result.status === "dropped" || result.status === "duplicate") return undefined;
        return result.status === "refused"
          ? `Not steered: ${result.reason}`
          : "Steering message sent.";
      }
      case "compact": {
        const result = await orchestrator.compact(threadId, messageId);
        return result.status === "duplicate" ? undefined : result.report;
      }
    }
  } catch (error) {
    return `/${command} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
