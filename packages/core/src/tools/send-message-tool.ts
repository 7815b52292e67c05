import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import type { Orchestrator } from "../types.js";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  text: Type.String({ description: "The message" }),
  to: Type.Optional(
    Type.String({
      description:
        "Another thread's id (adapter:channel:thread) to post in; default: this conversation",
    }),
  ),
  channel: Type.Optional(
    Type.String({
      description: "adapter:channel to start a new thread in (e.g. slack:C0123); instead of `to`",
    }),
  ),
});

/**
 * `send_message`: posts a message now, outside the final answer — progress in this conversation
 * while a long run goes on, or (an owner's run) a message to another thread or a new one in a
 * channel. What is sent is in the target thread's history and, for another thread, its context.
 */
export function createSendMessageTool(options: {
  /** The conversation the tool's `text` goes to without `to` or `channel`. */
  threadId: string;
  /** The thread whose run sends it (default `threadId`; a subagent's is its own). */
  from?: string;
  post: Orchestrator["postMessage"];
}): AgentTool<typeof parameters> {
  return {
    name: "send_message",
    label: "send_message",
    description:
      "Post a message right away: to this conversation (progress during a long task), or to another thread (`to`) or a new thread in a channel (`channel`: adapter:channel). Your final answer is still posted at the end; do not repeat a message you sent here as your final answer unless it is the answer.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const text = params.text;
      if (text.trim() === "") throw new Error("text is empty: there is nothing to send");
      const to = params.to?.trim() || undefined;
      const channel = params.channel?.trim() || undefined;
      if (to && channel) throw new Error("give `to` (a thread) or `channel`, not both");
      let target: { threadId: string } | { adapterId: string; channelId: string };
      if (channel) {
        const colon = channel.indexOf(":");
        if (colon <= 0 || colon === channel.length - 1) {
          throw new Error(`channel "${channel}" is not adapter:channel (e.g. slack:C0123)`);
        }
        target = { adapterId: channel.slice(0, colon), channelId: channel.slice(colon + 1) };
      } else target = { threadId: to ?? options.threadId };
      const result = await options.post(target, text, options.from ?? options.threadId);
      if (result.status !== "posted") throw new Error(`not sent: ${result.reason}`);
      return textResult(`Sent to ${result.threadId}.`, { threadId: result.threadId });
    },
  };
}
