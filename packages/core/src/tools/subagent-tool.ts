import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import type { SubagentInfo } from "../types.js";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  task: Type.String({ description: "What the subagent should do, complete in itself" }),
});

/** What the tool reads of a finished subagent (the subagent service's ChildResult has it). */
export interface SubagentAnswer {
  id: string;
  state: Exclude<SubagentInfo["state"], "running">;
  answer: string;
}

/**
 * `subagent`: runs a subagent on a task and waits for it: its answer is the tool's result. The
 * child has a fresh context (a long investigation does not fill this thread's) and runs on this
 * run's slot while this run waits (no deadlock under GUPPY_MAX_CONCURRENT).
 */
export function createSubagentTool(options: {
  run(task: string, signal?: AbortSignal): Promise<SubagentAnswer>;
}): AgentTool<typeof parameters> {
  return {
    name: "subagent",
    label: "subagent",
    description:
      "Run a subagent on a task and wait for its answer (it has its own fresh context, this workspace and your tools but spawn/subagent). Use it for a self-contained piece of work whose details need not fill this conversation.",
    parameters,
    async execute(_id, params: Static<typeof parameters>, signal) {
      const task = params.task.trim();
      if (task === "") throw new Error("task is empty: say what the subagent should do");
      const result = await options.run(task, signal);
      if (result.state === "failed")
        throw new Error(`subagent ${result.id} failed: ${result.answer}`);
      if (result.state === "aborted") {
        throw new Error(`subagent ${result.id} was stopped before it finished`);
      }
      return textResult(result.answer === "" ? "(the subagent gave no answer)" : result.answer, {
        id: result.id,
      });
    },
  };
}
