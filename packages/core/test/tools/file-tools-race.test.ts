import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPathPolicy } from "../../src/sandbox/path-policy.js";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { secretDenials } from "../../src/sandbox/thread-view.js";
import { createEditTool } from "../../src/tools/edit-tool.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import type { ToolContext } from "../../src/tools/tool-context.js";
import { createWriteTool } from "../../src/tools/write-tool.js";
import { resultText } from "./tool-fixture.js";

/**
 * A command in the sandbox swaps a folder of the workspace with a symlink to the home's parent
 * (renameat2 RENAME_EXCHANGE, x86_64 syscall 316) as fast as it can, while the file tools use a
 * path through that folder: they must never reach the home's real api-token or settings.json.
 */
const SWAP = `my ($a, $b) = @ARGV; $| = 1; print "go\\n"; while (1) { syscall(316, -100, $a, -100, $b, 2); }`;

const racing = process.platform === "linux" && process.arch === "x64";

describe.runIf(racing)("file tools against a folder swapped for a symlink", () => {
  let root: string;
  let home: string;
  let ws: string;
  let swapper: ChildProcess | undefined;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), "guppy-test-race-"));
    home = join(root, "home");
    ws = join(home, "workspace");
    mkdirSync(join(ws, "x", "home"), { recursive: true });
    writeFileSync(join(home, "api-token"), "SECRET-TOKEN");
    writeFileSync(join(home, "settings.json"), '{"keep":true}');
    writeFileSync(join(ws, "x", "home", "api-token"), "decoy");
    writeFileSync(join(ws, "x", "home", "settings.json"), "decoy");
    symlinkSync(root, join(ws, "y"));
    swapper = spawn("perl", ["-e", SWAP, join(ws, "x"), join(ws, "y")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => swapper?.stdout?.once("data", () => resolve()));
  });
  afterEach(() => {
    swapper?.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  });

  const context = (): ToolContext => ({
    workspaceDir: ws,
    artifactsDir: () => join(root, "artifacts"),
    sandbox: createSandbox({ type: "host" }),
    toolResultMaxChars: 10_000,
    bashTimeoutSeconds: 10,
    pathPolicy: createPathPolicy({
      grants: [{ path: ws, access: "rw", label: "the workspace" }],
      denials: secretDenials(home),
      scope: "this thread's sandbox",
    }),
  });

  it("read never returns the real api-token in 1,000 tries", async () => {
    const read = createReadTool(context());
    let leaked = 0;
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      try {
        const text = resultText(await read.execute(`r${i}`, { path: "x/home/api-token" }));
        if (text.includes("SECRET-TOKEN")) leaked++;
      } catch {
        refused++;
      }
    }
    expect(leaked).toBe(0);
    // The swap really raced the reads: some met the symlink and were refused.
    expect(refused).toBeGreaterThan(0);
  });

  it("write and edit never replace the real settings.json in 1,000 tries", async () => {
    const write = createWriteTool(context());
    const edit = createEditTool(context());
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      try {
        await write.execute(`w${i}`, { path: "x/home/settings.json", content: `pwned ${i}` });
      } catch {
        refused++;
      }
      try {
        await edit.execute(`e${i}`, {
          path: "x/home/settings.json",
          old_string: "keep",
          new_string: "pwned",
        });
      } catch {
        refused++;
      }
    }
    expect(readFileSync(join(home, "settings.json"), "utf8")).toBe('{"keep":true}');
    expect(refused).toBeGreaterThan(0);
  });
});
