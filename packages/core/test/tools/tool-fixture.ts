import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentToolResult } from "@mariozechner/pi-agent-core";
import { afterAll } from "vitest";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import type { ToolContext } from "../../src/tools/tool-context.js";

/** Every fixture's folder, removed when the file's tests end (a test that swaps fixtures in its
 * afterEach leaves the last one made). */
const made = new Set<string>();
afterAll(() => {
  for (const root of made) rmSync(root, { recursive: true, force: true });
  made.clear();
});

export function toolFixture(overrides: Partial<ToolContext> = {}) {
  const root = mkdtempSync(join(tmpdir(), "guppy-tools-"));
  made.add(root);
  const workspaceDir = join(root, "scratch");
  const artifacts = join(root, "artifacts");
  mkdirSync(workspaceDir);
  mkdirSync(artifacts);
  const ctx: ToolContext = {
    workspaceDir,
    artifactsDir: () => artifacts,
    sandbox: createSandbox({ type: "host" }),
    toolResultMaxChars: 10_000,
    bashTimeoutSeconds: 120,
    ...overrides,
  };
  return {
    ctx,
    root,
    workspaceDir,
    artifacts,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export function resultText(result: AgentToolResult<unknown>): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
