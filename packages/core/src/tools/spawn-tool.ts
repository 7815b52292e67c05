import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  task: Type.String({ description: "What the subagent should do, complete in itself" }),
  label: Type.Optional(Type.String({ description: "A short name for it (shown in /status)" })),
});

/**
 * `spawn`: starts a subagent in the background and returns its id at once. When it ends, its
 * answer comes back to this thread as a new message (a subagent result), so the agent can start
 * several, answer the user meanwhile, and report once the results are in.
 */
export function createSpawnTool(options: {
  spawn(task: string, label?: string): string;
  maxSubagents: number;
}): AgentTool<typeof parameters> {
  return {
    name: "spawn",
    label: "spawn",
    description: `Start a subagent in the background on a task (it has its own context, this workspace and your tools but spawn/subagent) and return at once. Its final answer comes back to you later as a message marked [Subagent result]. At most ${options.maxSubagents} run at once per thread. Use it for independent work in parallel; use \`subagent\` to wait for one.`,
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const task = params.task.trim();
      if (task === "") throw new Error("task is empty: say what the subagent should do");
      const label = params.label?.trim() || undefined;
      const id = options.spawn(task, label);
      return textResult(
        `Started subagent ${id}${label ? ` ("${label}")` : ""}. Its answer will come back as a [Subagent result] message; you need not wait for it.`,
        { id },
      );
    },
  };
}
