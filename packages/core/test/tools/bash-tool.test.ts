import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRedactor } from "../../src/logging/redact.js";
import type { ExecOptions } from "../../src/sandbox/exec.js";
import { hostContainment } from "../../src/sandbox/host-sandbox.js";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { settingsSchema } from "../../src/settings.js";
import { MAX_BASH_TIMEOUT_SECONDS } from "../../src/tools/bash-timeout.js";
import { createBashTool } from "../../src/tools/bash-tool.js";
import { excerptLengths } from "../../src/tools/spill-output.js";
import { fakeFullDisk } from "../helpers/full-disk.js";
import { uniqueMarker, waitNoneWith, waitRunning } from "../helpers/process-state.js";
import { resultText, toolFixture } from "./tool-fixture.js";

/** The host sandbox with smaller bounds than its 10 MiB in memory and 1 GiB on disk. */
function smallSandbox(bounds: Pick<ExecOptions, "maxBufferBytes" | "maxSpillBytes">) {
  const host = createSandbox({ type: "host" });
  return {
    ...host,
    exec: (command: string, o: ExecOptions) => host.exec(command, { ...o, ...bounds }),
  };
}

/** What `seq 1 n` prints. */
function seqText(n: number): string {
  let text = "";
  for (let i = 1; i <= n; i++) text += `${i}\n`;
  return text;
}

/** The message of the tool error `call` rejects with. */
async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the call did not fail");
}

describe("bash tool", () => {
  let fx = toolFixture();
  afterEach(() => {
    vi.unstubAllEnvs();
    fx.cleanup();
    fx = toolFixture();
  });

  it("returns combined stdout and stderr with the exit code, run in the workspace", async () => {
    const bash = createBashTool(fx.ctx);
    const r = await bash.execute("1", { command: "echo out; echo err >&2; pwd" });
    const text = resultText(r);
    expect(text).toContain("out");
    expect(text).toContain("err");
    expect(text).toContain(fx.workspaceDir);
    expect(text).toContain("[exit code 0]");
    expect(r.details.exitCode).toBe(0);
  });

  it("creates the workspace before its first command", async () => {
    rmSync(fx.workspaceDir, { recursive: true });
    const result = await createBashTool(fx.ctx).execute("c0", { command: "pwd" });
    expect(resultText(result).trim()).toContain(fx.workspaceDir);
    expect(existsSync(fx.workspaceDir)).toBe(true);
  });

  it("reports a non-zero exit as a tool error that still carries the output", async () => {
    const bash = createBashTool(fx.ctx);
    await expect(bash.execute("1", { command: "echo partial; exit 3" })).rejects.toThrow(
      /partial[\s\S]*\[exit code 3\]/,
    );
  });

  it("kills the whole process tree on timeout, leaving no orphan", async () => {
    const bash = createBashTool(fx.ctx);
    const m = uniqueMarker();
    const started = bash.execute("1", {
      command: `sleep 300.${m} & (setsid sleep 301.${m} &); sleep 302.${m}`,
      timeout_seconds: 1,
    });
    await waitRunning([`sleep 300.${m}`, `sleep 301.${m}`, `sleep 302.${m}`]);
    await expect(started).rejects.toThrow(/timed out after 1 s/);
    expect(await waitNoneWith(m)).toBe(true);
  });

  // On the host a command runs in a PID namespace of its own where unshare can make one (root):
  // then not even a process that left the group and cleared its environment (no tag) survives.
  it.runIf(hostContainment().kind === "pid-namespace")(
    "kills on timeout what escaped with setsid env -i or a double fork, before it acts",
    async () => {
      const bash = createBashTool(fx.ctx);
      const m = uniqueMarker();
      const escaped = join(fx.workspaceDir, "escaped");
      const forked = join(fx.workspaceDir, "forked");
      const started = bash.execute("1", {
        command: [
          `setsid env -i sh -c 'sleep 2.${m}; echo escaped > ${escaped}' &`,
          `(setsid env -i sh -c '(sleep 2.${m}1; echo forked > ${forked}) &' &) &`,
          `sleep 60.${m}`,
        ].join("\n"),
        timeout_seconds: 1,
      });
      await waitRunning([`sleep 2.${m}`, `sleep 2.${m}1`]);
      await expect(started).rejects.toThrow(/timed out after 1 s/);
      expect(await waitNoneWith(m)).toBe(true);
      // Past the escapees' 2 s: nothing wrote.
      await new Promise((r) => setTimeout(r, 2500));
      expect(existsSync(escaped)).toBe(false);
      expect(existsSync(forked)).toBe(false);
    },
  );

  it.runIf(hostContainment().kind === "pid-namespace")(
    "runs a host command with its own processes in /proc and the host's files as they are",
    async () => {
      const outside = join(fx.root, "outside.txt");
      writeFileSync(outside, "host file\n");
      const r = await createBashTool(fx.ctx).execute("1", {
        command: [
          "echo $$",
          "ls /proc | grep -c '^[0-9]'",
          "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c 'vites[t]'",
          `cat ${outside}`,
          `echo written > ${outside}.new`,
        ].join("; "),
      });
      const [shellPid, count, guppy, content] = resultText(r).trim().split("\n");
      expect(shellPid).toBe("1");
      expect(Number(count)).toBeLessThan(10);
      expect(guppy).toBe("0"); // the test runner (guppy here) is not among them
      expect(content).toBe("host file");
      expect(readFileSync(`${outside}.new`, "utf8")).toBe("written\n");
    },
  );

  it("kills the process tree when the run is aborted", async () => {
    const bash = createBashTool(fx.ctx);
    const m = uniqueMarker();
    const controller = new AbortController();
    const started = bash.execute("1", { command: `sleep 300.${m} & wait` }, controller.signal);
    await waitRunning([`sleep 300.${m}`]);
    controller.abort();
    await expect(started).rejects.toThrow(/aborted/);
    expect(await waitNoneWith(m)).toBe(true);
  });

  it("cuts long output to head and tail and saves the full output to a file it names", async () => {
    fx.cleanup();
    fx = toolFixture({ toolResultMaxChars: 1000 });
    const bash = createBashTool(fx.ctx);
    const r = await bash.execute("1", { command: "seq 1 20000" });
    const text = resultText(r);
    expect(text.length).toBeLessThan(1500);
    expect(text).toMatch(/^1\n2\n3\n/);
    expect(text).toContain("20000");
    const path = r.details.fullOutputPath;
    expect(path).toBeDefined();
    expect(text).toContain(path!);
    const full = readFileSync(path!, "utf8");
    expect(full.split("\n").filter(Boolean)).toHaveLength(20000);
    // A last newline does not start another line (as `read` counts them).
    expect(text).toContain(`(${full.length} chars, 20000 lines) is saved at ${path}`);
  });

  it("keeps the real end of an output longer than memory, and saves every line of it", async () => {
    const bash = createBashTool({ ...fx.ctx, sandbox: smallSandbox({ maxBufferBytes: 65536 }) });
    const message = await failure(
      bash.execute("1", {
        command: 'seq 1 200000; echo "BUILD FAILED: missing symbol foo"; exit 2',
      }),
    );
    const expected = `${seqText(200000)}BUILD FAILED: missing symbol foo\n`;
    expect(message.length).toBeLessThan(11_000);
    expect(message).toMatch(/^1\n2\n3\n/);
    expect(message).toMatch(/199999\n200000\nBUILD FAILED: missing symbol foo\n\n\[exit code 2\]$/);
    const path = /saved at (\S+);/.exec(message)?.[1];
    expect(path).toBeDefined();
    expect(message).toContain(`The full output (${expected.length} bytes, 200001 lines)`);
    expect(readdirSync(fx.artifacts)).toHaveLength(1);
    const saved = readFileSync(path!, "utf8");
    const lines = saved.split("\n");
    expect(lines).toHaveLength(200002); // the last newline leaves one empty piece
    expect(lines[0]).toBe("1");
    expect(lines[99_999]).toBe("100000");
    expect(lines[199_999]).toBe("200000");
    expect(lines[200_000]).toBe("BUILD FAILED: missing symbol foo");
    expect(saved).toBe(expected);
  });

  it("caps the saved file at its head and tail and says so exactly", async () => {
    const bash = createBashTool({
      ...fx.ctx,
      sandbox: smallSandbox({ maxBufferBytes: 65536, maxSpillBytes: 262144 }),
    });
    const r = await bash.execute("1", { command: "seq 1 200000; echo the end" });
    const text = resultText(r);
    const path = r.details.fullOutputPath!;
    const expected = `${seqText(200000)}the end\n`;
    expect(text).toMatch(/199999\n200000\nthe end\n\n\[exit code 0\]$/);
    expect(text).toContain(
      `The output (${expected.length} bytes, 200001 lines) was too long to save whole: ${path} holds its first 262144 bytes, then a line saying how many bytes were left out, then its last 32768 bytes;`,
    );
    const saved = readFileSync(path, "utf8");
    const left = expected.length - 262144 - 32768;
    expect(saved).toBe(
      `${expected.slice(0, 262144)}\n[... ${left} bytes of output were not saved here ...]\n${expected.slice(-32768)}`,
    );
  });

  it("reports an output file it could not write instead of failing the tool", async () => {
    const missing = join(fx.root, "no-such-dir");
    const bash = createBashTool({
      ...fx.ctx,
      artifactsDir: () => missing,
      toolResultMaxChars: 1000,
    });
    // Kept in memory, saved after the run.
    const r = await bash.execute("1", { command: "seq 1 20000" });
    expect(resultText(r)).toMatch(
      /The full output \(\d+ chars, 20000 lines\) could not be saved: ENOENT/,
    );
    expect(resultText(r)).toMatch(/19999\n20000\n\n\[exit code 0\]$/);
    expect(r.details.fullOutputPath).toBeUndefined();
    // Too long for memory: saved as it comes.
    const big = await createBashTool({
      ...fx.ctx,
      artifactsDir: () => missing,
      sandbox: smallSandbox({ maxBufferBytes: 65536 }),
    }).execute("2", { command: "seq 1 200000" });
    expect(resultText(big)).toMatch(/\(\d+ bytes, 200000 lines\) could not be saved: ENOENT/);
    expect(resultText(big)).toMatch(/199999\n200000\n\n\[exit code 0\]$/);
    // A directory that cannot be made (a file in its place) costs only what would go in it: a
    // short output is the result as always, a long one says why it was not saved.
    const blocked = () => {
      throw new Error(`EEXIST: file already exists, mkdir '${missing}'`);
    };
    const small = await createBashTool({ ...fx.ctx, artifactsDir: blocked }).execute("3", {
      command: "echo hi",
    });
    expect(small.details.exitCode).toBe(0);
    expect(resultText(small)).toBe("hi\n\n[exit code 0]");
    const long = await createBashTool({
      ...fx.ctx,
      artifactsDir: blocked,
      toolResultMaxChars: 1000,
    }).execute("4", { command: "seq 1 20000" });
    expect(resultText(long)).toMatch(/could not be saved: EEXIST/);
  });

  it("removes an output file the disk filled up under, and says why nothing was saved", async () => {
    const disk = fakeFullDisk();
    disk.free = 200_000;
    disk.chunk = 4096;
    try {
      const bash = createBashTool({ ...fx.ctx, sandbox: smallSandbox({ maxBufferBytes: 65536 }) });
      const r = await bash.execute("1", { command: "seq 1 200000" });
      const text = resultText(r);
      expect(text).toMatch(
        /\(\d+ bytes, 200000 lines\) could not be saved: ENOSPC: no space left on device, write\./,
      );
      expect(text).toMatch(/199999\n200000\n\n\[exit code 0\]$/);
      expect(r.details.fullOutputPath).toBeUndefined();
      expect(readdirSync(fx.artifacts)).toEqual([]);
    } finally {
      disk.restore();
    }
  });

  it("redacts a secret the excerpt's borders cut through, in memory and past it", async () => {
    const KEY = "sk-live-Q7f3Zp9WmX2vL8rT4yB6";
    const redactor = createRedactor([{ name: "GUPPY_API_KEY", value: KEY }]);
    const { head, tail } = excerptLengths(1000);
    /** An output of `size` chars with the key across its excerpt's head and tail borders. */
    const output = (size: number) => {
      const chars = "x".repeat(size).split("");
      for (const at of [head - 10, size - tail - 10]) chars.splice(at, KEY.length, ...KEY);
      return chars.join("");
    };
    const leaked = (text: string) =>
      [KEY.slice(0, 6), KEY.slice(6, 12), KEY.slice(-12, -6), KEY.slice(-6)].filter((part) =>
        text.includes(part),
      );
    const file = join(fx.workspaceDir, "out.txt");

    writeFileSync(file, output(5000));
    const small = createBashTool({ ...fx.ctx, toolResultMaxChars: 1000, redactor });
    const inMemory = resultText(await small.execute("1", { command: "cat out.txt" }));
    expect(inMemory).toContain("[... ");
    expect(leaked(inMemory)).toEqual([]);
    // The saved output is the redacted one.
    const saved = readFileSync(/saved at (\S+);/.exec(inMemory)?.[1] ?? "", "utf8");
    expect(saved.split("[redacted: GUPPY_API_KEY]")).toHaveLength(3);

    writeFileSync(file, output(100_000));
    const big = createBashTool({
      ...fx.ctx,
      toolResultMaxChars: 1000,
      redactor,
      sandbox: smallSandbox({ maxBufferBytes: 65536 }),
    });
    const overflow = resultText(await big.execute("2", { command: "cat out.txt" }));
    expect(overflow).toMatch(/bytes omitted/);
    expect(leaked(overflow)).toEqual([]);
    // The split key's chars are among those counted as left out.
    const shown = overflow
      .replace(/\n\n\[\.\.\. .*\]\n\n/s, "")
      .replace(/\n\n\[exit code 0\]$/, "");
    const omitted = Number(/\[\.\.\. (\d+) bytes omitted/.exec(overflow)?.[1]);
    expect(shown.length + omitted).toBe(100_000);
  });

  it("refuses a timeout_seconds past the maximum instead of a run killed at once", async () => {
    const bash = createBashTool(fx.ctx);
    const marker = join(fx.workspaceDir, "ran");
    // 34.7 days: past the maximum, and past what a Node timer can wait (2^31 − 1 ms), so a
    // timer set to it fires after 1 ms.
    const tooLong = 3_000_000;
    const call = {
      name: "bash",
      id: "c",
      arguments: { command: `touch ${marker}`, timeout_seconds: tooLong },
    };
    expect(() => validateToolArguments(bash, { type: "toolCall", ...call })).toThrow(
      /timeout_seconds/,
    );
    await expect(bash.execute("1", call.arguments)).rejects.toThrow(
      `timeout_seconds ${tooLong} is out of range: give a whole number of seconds from 1 to ${MAX_BASH_TIMEOUT_SECONDS} (24 h). The command was not run.`,
    );
    expect(existsSync(marker)).toBe(false);
    await expect(
      createSandbox({ type: "host" }).exec(`touch ${marker}`, {
        cwd: fx.workspaceDir,
        timeoutMs: tooLong * 1000,
      }),
    ).rejects.toThrow(RangeError);
    expect(existsSync(marker)).toBe(false);
    // The maximum itself is a normal run.
    const r = await bash.execute("2", {
      command: "echo fine",
      timeout_seconds: MAX_BASH_TIMEOUT_SECONDS,
    });
    expect(resultText(r)).toContain("fine\n\n[exit code 0]");
  });

  it("runs commands without the secrets guppy consumes, keeping every other variable", async () => {
    const secrets = new Map<string, string>();
    for (const def of Object.values(settingsSchema)) {
      if (def.secret && def.env) secrets.set(def.env, `setting-secret-${def.env}`);
    }
    for (const name of [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_OAUTH_TOKEN",
      "OPENAI_API_KEY",
      "GROQ_API_KEY",
    ])
      secrets.set(name, `provider-key-${name}`);
    for (const [name, value] of secrets) vi.stubEnv(name, value);
    vi.stubEnv("GITHUB_TOKEN", "users-own-github-token");
    vi.stubEnv("GUPPY_TEST_UNRELATED", "still-here");
    vi.stubEnv("OLLAMA_API_KEY", "custom-endpoint-key");

    const env = async (modelProvider?: string) =>
      resultText(
        await createBashTool({
          ...fx.ctx,
          sandbox: createSandbox({ type: "host" }, modelProvider ? { modelProvider } : {}),
        }).execute("1", { command: "env" }),
      );
    const shown = await env("anthropic");
    for (const [name, value] of secrets) {
      expect(shown, name).not.toContain(value);
      expect(shown, name).not.toContain(`${name}=`);
    }
    expect(shown).toContain("GUPPY_TEST_UNRELATED=still-here");
    expect(shown).toContain(`PATH=${process.env.PATH}`);
    // Another tool's token stays — unless the model's provider reads it as its key.
    expect(shown).toContain("GITHUB_TOKEN=users-own-github-token");
    expect(await env("github-copilot")).not.toContain("users-own-github-token");
    // A custom endpoint's key variable (GUPPY_MODEL=ollama/... reads OLLAMA_API_KEY).
    expect(shown).toContain("OLLAMA_API_KEY=custom-endpoint-key");
    expect(await env("ollama")).not.toContain("custom-endpoint-key");
    // The same without a model: provider keys and secret settings are withheld anyway.
    const plain = await env();
    for (const value of secrets.values()) expect(plain).not.toContain(value);
    expect(plain).toContain("GUPPY_TEST_UNRELATED=still-here");
  });

  it("runs commands without the app's secret settings it names (a bot token)", async () => {
    vi.stubEnv("APP_BOT_TOKEN", "app-secret-value");
    vi.stubEnv("APP_PLAIN", "app-plain-value");
    const shown = resultText(
      await createBashTool({
        ...fx.ctx,
        sandbox: createSandbox({ type: "host" }, { secretEnv: ["APP_BOT_TOKEN"] }),
      }).execute("1", { command: "env" }),
    );
    expect(shown).not.toContain("app-secret-value");
    expect(shown).toContain("APP_PLAIN=app-plain-value");
  });
});
