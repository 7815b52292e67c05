import type { AfterToolCallContext, AfterToolCallResult } from "@mariozechner/pi-agent-core";
import { spillOutput } from "../artifacts/spill-output.js";

/**
 * The `afterToolCall` hook that applies GUPPY_TOOL_RESULT_MAX_CHARS to every tool's result: a
 * longer text goes into the context as a head+tail excerpt whose note names the file (under
 * the thread's artifacts/) holding all of it, which `read` pages through. Tools that already
 * spilled their own output (bash; `details.fullOutputPath`) are left alone, and so is `read`,
 * which pages by itself (its page plus a "continue with offset=" line must not be spilled into
 * yet another file to read).
 */
const selfPaging = new Set(["read"]);

export function createToolResultSpill(options: {
  maxChars: number;
  artifactsDir: () => string;
}): (ctx: AfterToolCallContext) => Promise<AfterToolCallResult | undefined> {
  return async ({ toolCall, result }) => {
    if (selfPaging.has(toolCall.name)) return undefined;
    const details = result.details as { fullOutputPath?: unknown } | undefined;
    if (details && typeof details === "object" && details.fullOutputPath) return undefined;
    const blocks = result.content;
    const text = blocks
      .filter((b): b is { type: "text"; text: string } => b.type === "text")
      .map((b) => b.text)
      .join("\n");
    if (text.length <= options.maxChars) return undefined;
    const spilled = spillOutput({
      text,
      maxChars: options.maxChars,
      dir: options.artifactsDir,
      label: toolCall.name.replace(/[^A-Za-z0-9_-]/g, "_"),
    });
    return {
      content: [{ type: "text", text: spilled.text }, ...blocks.filter((b) => b.type !== "text")],
      details: {
        ...(details && typeof details === "object" ? details : {}),
        fullOutputPath: spilled.path,
      },
    };
  };
}
