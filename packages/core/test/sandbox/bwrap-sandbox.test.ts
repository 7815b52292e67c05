import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scopeDirs } from "../../src/memory/memory.js";
import {
  killLeftoverTrees,
  killRunningTrees,
  recordRunningTrees,
  taggedPids,
} from "../../src/sandbox/process-tree.js";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { sandboxPathPolicy } from "../../src/sandbox/thread-view.js";
import type { SandboxConfig } from "../../src/sandbox/types.js";
import { threadDirOf } from "../../src/store/thread-layout.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import type { ToolContext } from "../../src/tools/tool-context.js";
import { createWriteTool } from "../../src/tools/write-tool.js";
import { isAlive, waitDead } from "../helpers/process-state.js";

const bwrapWorks =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], { stdio: "ignore" })
    .status === 0;

const THREAD = "telegram:42:default";
const OTHER_THREAD = "telegram:43:default";

/**
 * A fake $HOME holding a secret and guppy's home (settings.json, api-token, another thread's
 * folder), and one thread's bwrap sandbox with HOME pointing there.
 */
function fixture(config: SandboxConfig) {
  const root = mkdtempSync(join(tmpdir(), "guppy-bwrap-"));
  const userHome = join(root, "home");
  const home = join(userHome, ".guppy");
  const workspace = join(threadDirOf(home, THREAD), "scratch");
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(userHome, "secret.txt"), "TOP-SECRET-IN-HOME");
  writeFileSync(join(home, "settings.json"), '{"apiKey": "SETTINGS-KEY-123"}');
  writeFileSync(join(home, "api-token"), "API-TOKEN-456");
  const other = join(threadDirOf(home, OTHER_THREAD), "scratch");
  mkdirSync(other, { recursive: true });
  writeFileSync(join(other, "theirs.txt"), "OTHER-THREAD-789");
  const sandbox = createSandbox(config, { home, threadId: THREAD });
  const env = { ...process.env, HOME: userHome, GUPPY_HOME: home };
  const run = (command: string, timeoutMs = 10_000) =>
    sandbox.exec(command, { cwd: workspace, timeoutMs, env });
  return { root, userHome, home, workspace, other, sandbox, run };
}

const bwrap: SandboxConfig = { type: "bwrap", mounts: [], network: true };

describe.runIf(bwrapWorks)("the bubblewrap sandbox", () => {
  let fx: ReturnType<typeof fixture>;
  beforeEach(() => {
    fx = fixture(bwrap);
  });
  afterEach(() => {
    recordRunningTrees(undefined);
    killRunningTrees();
    rmSync(fx.root, { recursive: true, force: true });
  });

  it("runs in the workspace, at the same path as on the host", async () => {
    const result = await fx.run("pwd; echo hi");
    expect(result.output).toBe(`${fx.workspace}\nhi\n`);
    expect(result.exitCode).toBe(0);
  });

  it("hides the rest of $HOME, guppy's secrets and other threads' folders", async () => {
    for (const path of [
      join(fx.userHome, "secret.txt"),
      join(fx.home, "settings.json"),
      join(fx.home, "api-token"),
      join(fx.other, "theirs.txt"),
    ]) {
      const result = await fx.run(`cat '${path}'`);
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain("No such file or directory");
    }
    const listing = await fx.run(`ls -a "$HOME"; ls -a '${fx.home}'; grep -r SECRET "$HOME"; true`);
    expect(listing.output).not.toContain("secret.txt");
    expect(listing.output).not.toContain("settings.json");
    expect(listing.output).not.toContain("api-token");
    expect(listing.output).not.toContain("TOP-SECRET");
  });

  it("sees only its own processes: guppy's, and guppy's environment, are not in its /proc", async () => {
    const result = await fx.run(
      `ls /proc | grep -c '^[0-9]'; cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c 'vites[t]'; true`,
    );
    const [count, guppy] = result.output.trim().split("\n").map(Number);
    expect(count).toBeLessThan(10);
    expect(guppy).toBe(0);
  });

  it("does not give the tools GUPPY_HOME", async () => {
    const result = await fx.run('echo "[$GUPPY_HOME]"');
    expect(result.output).toBe("[]\n");
  });

  it("masks the system's secrets", async () => {
    const result = await fx.run("cat /etc/shadow; wc -c < /etc/shadow; true");
    expect(result.output).not.toMatch(/root:/);
  });

  it("keeps writes outside what it may write off the host", async () => {
    const outside = join(fx.root, "outside.txt");
    const inHome = join(fx.userHome, "dropped.txt");
    const other = join(fx.other, "planted.txt");
    const system = `/usr/guppy-planted-${basename(fx.root)}`;
    const result = await fx.run(
      `echo x > '${outside}'; echo x > '${inHome}'; echo x > '${other}'; echo x > ${system}; true`,
    );
    expect(result.exitCode).toBe(0);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(inHome)).toBe(false);
    expect(existsSync(other)).toBe(false);
    expect(existsSync(system)).toBe(false);
  });

  it("keeps what it writes in the workspace, the memory files and the daily notes", async () => {
    const [global, transport, channel] = scopeDirs(fx.home, THREAD).map((s) =>
      join(s.dir, "MEMORY.md"),
    );
    const note = join(fx.home, "memory", "202611", "20261127.md");
    const result = await fx.run(
      `echo work > result.txt && echo g >> '${global}' && echo t >> '${transport}' && echo c >> '${channel}' && mkdir -p '${join(fx.home, "memory", "202611")}' && echo n > '${note}'`,
    );
    expect(result.output).toBe("");
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(fx.workspace, "result.txt"), "utf8")).toBe("work\n");
    expect(readFileSync(global!, "utf8")).toBe("g\n");
    expect(readFileSync(transport!, "utf8")).toBe("t\n");
    expect(readFileSync(channel!, "utf8")).toBe("c\n");
    expect(readFileSync(note, "utf8")).toBe("n\n");
  });

  it("shows skills and attachments read-only", async () => {
    const skill = join(fx.home, "skills", "demo", "SKILL.md");
    mkdirSync(join(fx.home, "skills", "demo"), { recursive: true });
    writeFileSync(skill, "skill body");
    const attachment = join(threadDirOf(fx.home, THREAD), "attachments", "a.txt");
    mkdirSync(join(threadDirOf(fx.home, THREAD), "attachments"), { recursive: true });
    writeFileSync(attachment, "attached");
    const result = await fx.run(
      `cat '${skill}' '${attachment}'; echo; echo changed > '${skill}' || echo refused`,
    );
    expect(result.output).toContain("skill bodyattached");
    expect(result.output).toContain("refused");
    expect(readFileSync(skill, "utf8")).toBe("skill body");
  });

  it("kills a timed-out command's setsid grandchild (it never writes its marker)", async () => {
    const marker = join(fx.workspace, "marker");
    const result = await fx.run(
      // Double fork: the grandchild is re-parented away from the shell before the timeout, in a
      // session of its own, with an empty environment (no tag).
      `(setsid env -i /bin/sh -c 'sleep 2; echo late > ${marker}' &); echo started; sleep 30`,
      1000,
    );
    expect(result.timedOut).toBe(true);
    expect(result.output).toContain("started");
    await new Promise((r) => setTimeout(r, 3000));
    expect(existsSync(marker)).toBe(false);
  });

  it("carries the tag into the sandbox: the running-tree records see and kill its processes", async () => {
    const record = join(fx.root, "running-tools.jsonl");
    recordRunningTrees(record);
    let output = "";
    const running = fx.sandbox.exec("echo go; exec sleep 30", {
      cwd: fx.workspace,
      timeoutMs: 60_000,
      env: { ...process.env, HOME: fx.userHome },
      onOutput: (chunk) => {
        output += chunk;
      },
    });
    while (!output.includes("go")) await new Promise((r) => setTimeout(r, 20));
    const { tag } = JSON.parse(readFileSync(record, "utf8")) as { tag: string };
    const inside = taggedPids(tag);
    expect(inside.length).toBeGreaterThan(0);
    expect(killRunningTrees()).toBe(1);
    for (const pid of inside) expect(await waitDead(pid)).toBe(true);
    expect((await running).exitCode).not.toBe(0);
    expect(inside.every((pid) => !isAlive(pid))).toBe(true);
  });
});

describe.runIf(bwrapWorks)("a killed guppy's sandboxed commands", () => {
  it("are found by their tag and killed at the next start (killLeftoverTrees)", async () => {
    const fx = fixture(bwrap);
    try {
      const record = join(fx.root, "running-tools.jsonl");
      recordRunningTrees(record);
      let output = "";
      const running = fx.sandbox.exec("echo go; sleep 30", {
        cwd: fx.workspace,
        timeoutMs: 60_000,
        onOutput: (chunk) => {
          output += chunk;
        },
      });
      while (!output.includes("go")) await new Promise((r) => setTimeout(r, 20));
      // What the next start reads: this process stops recording as a killed one would.
      recordRunningTrees(undefined);
      const { tag } = JSON.parse(readFileSync(record, "utf8")) as { tag: string };
      const inside = taggedPids(tag);
      expect(inside.length).toBeGreaterThan(1);
      expect(killLeftoverTrees(record)).toBe(1);
      for (const pid of inside) expect(await waitDead(pid)).toBe(true);
      await running;
    } finally {
      killRunningTrees();
      rmSync(fx.root, { recursive: true, force: true });
    }
  });
});

describe.runIf(bwrapWorks)("the bubblewrap sandbox's network and mounts", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("has only loopback with the network off", async () => {
    const fx = fixture({ type: "bwrap", mounts: [], network: false });
    root = fx.root;
    const result = await fx.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    expect(result.output).toBe("lo\n");
  });

  it("shows an extra mount read-only unless :rw", async () => {
    const extra = mkdtempSync(join(tmpdir(), "guppy-extra-"));
    const writable = mkdtempSync(join(tmpdir(), "guppy-extra-rw-"));
    writeFileSync(join(extra, "data.txt"), "extra data");
    const fx = fixture({
      type: "bwrap",
      mounts: [
        { path: extra, access: "ro" },
        { path: writable, access: "rw" },
      ],
      network: true,
    });
    root = fx.root;
    const result = await fx.run(
      `cat '${extra}/data.txt'; echo; echo x > '${extra}/new' || echo refused; echo y > '${writable}/new'`,
    );
    expect(result.output).toContain("extra data");
    expect(result.output).toContain("refused");
    expect(existsSync(join(extra, "new"))).toBe(false);
    expect(readFileSync(join(writable, "new"), "utf8")).toBe("y\n");
    rmSync(extra, { recursive: true, force: true });
    rmSync(writable, { recursive: true, force: true });
  });
});

describe("the file tools under the sandbox's rule set", () => {
  let fx: ReturnType<typeof fixture>;
  afterEach(() => rmSync(fx.root, { recursive: true, force: true }));

  function tools(config: SandboxConfig, sandbox: Sandbox) {
    const ctx: ToolContext = {
      workspaceDir: fx.workspace,
      artifactsDir: () => join(fx.root, "artifacts"),
      sandbox,
      toolResultMaxChars: 10_000,
      bashTimeoutSeconds: 120,
      pathPolicy: sandboxPathPolicy(config, fx.home, THREAD),
    };
    return { read: createReadTool(ctx), write: createWriteTool(ctx) };
  }
  const text = (r: { content: Array<{ type: string; text?: string }> }) =>
    r.content.map((c) => c.text ?? "").join("");

  it("refuses under bwrap what the sandbox hides, a path reached through a symlink too", async () => {
    fx = fixture(bwrap);
    const { read, write } = tools(bwrap, fx.sandbox);
    const secret = join(fx.userHome, "secret.txt");
    await expect(read.execute("1", { path: secret })).rejects.toThrow(
      /secret\.txt is outside what this thread's sandbox can see; allowed: the workspace/,
    );
    symlinkSync(secret, join(fx.workspace, "link.txt"));
    await expect(read.execute("2", { path: "link.txt" })).rejects.toThrow(/really .*secret\.txt/);
    await expect(read.execute("3", { path: join(fx.home, "settings.json") })).rejects.toThrow(
      /refused: it is guppy's settings/,
    );
    await expect(read.execute("4", { path: join(fx.other, "theirs.txt") })).rejects.toThrow(
      /outside what this thread's sandbox can see/,
    );
    await expect(
      write.execute("5", { path: join(fx.home, "skills", "x", "SKILL.md"), content: "x" }),
    ).rejects.toThrow(/read-only for this thread's sandbox/);
    writeFileSync(join(fx.workspace, "mine.txt"), "mine");
    expect(text(await read.execute("6", { path: "mine.txt" }))).toContain("mine");
    await write.execute("7", { path: join(fx.home, "MEMORY.md"), content: "remember" });
    expect(readFileSync(join(fx.home, "MEMORY.md"), "utf8")).toBe("remember");
    expect(text(await read.execute("8", { path: "/etc/hostname" }))).not.toBe("");
  });

  it("refuses guppy's secret files on the host too, and nothing else", async () => {
    const host: SandboxConfig = { type: "host" };
    fx = fixture(host);
    const { read } = tools(host, fx.sandbox);
    for (const name of ["settings.json", "api-token"]) {
      await expect(read.execute("1", { path: join(fx.home, name) })).rejects.toThrow(/refused/);
    }
    await expect(read.execute("4", { path: "/proc/self/environ" })).rejects.toThrow(
      /guppy's own process/,
    );
    mkdirSync(join(fx.home, "access"));
    writeFileSync(join(fx.home, "access", "telegram.json"), "[]");
    await expect(
      read.execute("2", { path: join(fx.home, "access", "telegram.json") }),
    ).rejects.toThrow(/guppy's access lists/);
    expect(text(await read.execute("3", { path: join(fx.userHome, "secret.txt") }))).toContain(
      "TOP-SECRET-IN-HOME",
    );
  });

  it("does not give host commands GUPPY_HOME either", async () => {
    fx = fixture({ type: "host" });
    expect((await fx.run('echo "[$GUPPY_HOME]"')).output).toBe("[]\n");
  });
});
