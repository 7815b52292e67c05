import type { AgentTool } from "@mariozechner/pi-agent-core";

/** How long a tool may take to end on its own once its run is aborted (bash kills its tree). */
export const TOOL_ABORT_GRACE_MS = 500;

/**
 * The run's tools, each ending at most TOOL_ABORT_GRACE_MS after the run's abort: pi-agent-core
 * awaits a tool's promise, so a tool that does not listen to its signal (an upload hanging on
 * the network, an MCP server that never answers) would hold an aborted run — and its thread,
 * and a shutdown — for as long as it hangs. A tool that ends within the grace keeps its own
 * result; past it the call fails as stopped and its work is left behind.
 */
export function abortableTools(tools: readonly AgentTool[]): AgentTool[] {
  return tools.map((tool) => ({
    ...tool,
    execute: (id, params, signal, onUpdate) => {
      const running = tool.execute(id, params, signal, onUpdate);
      return signal ? untilAborted(running, signal, tool.name) : running;
    },
  }));
}

function untilAborted<T>(running: Promise<T>, signal: AbortSignal, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      timer = setTimeout(
        () => reject(new Error(`The ${name} tool was stopped: the run was aborted.`)),
        TOOL_ABORT_GRACE_MS,
      );
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([running, stopped]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
}
