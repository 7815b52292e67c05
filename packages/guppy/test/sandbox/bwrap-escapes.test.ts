import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolCall } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "../serve/serve-harness.js";
import {
  API_TOKEN,
  call,
  MARKERS,
  requestWithResult,
  type SandboxHome,
  SETTINGS_KEY,
  sandboxHome,
  scenarioScript,
  systemPrompt,
  toolResults,
} from "./sandbox-fixture.js";

/** Planted in files outside guppy's view that a symlink in its home points at. */
const ENV_MARKER = "envfile-marker-6f1d02";
const SKILL_MARKER = "skill-file-marker-1a7c";
const SKILL_DIR_MARKER = "skill-dir-marker-8e3b";
const HEARTBEAT_MARKER = "heartbeat-marker-4d9f";
const PLANTED = [...MARKERS, ENV_MARKER, SKILL_MARKER, SKILL_DIR_MARKER, HEARTBEAT_MARKER];

/** YYYYMMDD of today (UTC, as GUPPY_TIMEZONE says) plus `days`. */
const utcDay = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10).replaceAll("-", "");

/**
 * Issue 47's two sandbox escapes, end to end through `guppy serve` under bubblewrap: symlinks a
 * command (or anything else) leaves where guppy reads its own files, and a folder swapped for a
 * symlink to the home's parent while the file tools use a path through it.
 */
describe.runIf(existsSync("/usr/bin/bwrap"))("guppy serve: no way out through a symlink", () => {
  const scenarios = new Map<string, ToolCall[]>();
  let llm: MockLlm;
  let h: SandboxHome;
  let serve: ServeProcess;
  const memory = () => join(h.home, "memory");
  const output = () => `${serve.stdout()}\n${serve.stderr()}`;

  /** Posts `text` to `thread` and waits for guppy's answer in its log. */
  const converse = async (thread: string, text: string, ms = 60_000) => {
    const id = `http:api:${thread}`;
    const posted = await serve.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    expect(posted.status).toBe(202);
    return waitFor(
      async () => (await threadMessages(serve, id)).findLast((m) => m.is_bot),
      ms,
      `the answer in ${id}`,
    );
  };

  beforeAll(async () => {
    llm = await startMockLlm(scenarioScript(scenarios));
    h = sandboxHome();
    // Files outside guppy's view, and symlinks to them where guppy reads its own files.
    writeFileSync(join(h.home, "guppy.env"), `# ${ENV_MARKER}\n`);
    const outside = (name: string, text: string) => {
      writeFileSync(join(h.userHome, name), text);
      return join(h.userHome, name);
    };
    const skillFile = outside(
      "skill.md",
      `---\nname: leak\ndescription: ${SKILL_MARKER}\n---\n${SKILL_MARKER}\n`,
    );
    mkdirSync(join(h.home, "skills", "leak"), { recursive: true });
    symlinkSync(skillFile, join(h.home, "skills", "leak", "SKILL.md"));
    mkdirSync(join(h.userHome, "skill-dir"));
    writeFileSync(
      join(h.userHome, "skill-dir", "SKILL.md"),
      `---\nname: leakdir\ndescription: ${SKILL_DIR_MARKER}\n---\n${SKILL_DIR_MARKER}\n`,
    );
    symlinkSync(join(h.userHome, "skill-dir"), join(h.home, "skills", "leakdir"));
    symlinkSync(
      outside("heartbeat.md", `- tell the user ${HEARTBEAT_MARKER}\n`),
      join(h.home, "HEARTBEAT.md"),
    );
    mkdirSync(join(h.home, "http", "api"), { recursive: true });
    symlinkSync(h.secretFile, join(h.home, "http", "api", "MEMORY.md"));
    serve = await startServe(h.home, {
      ...llm.env("openai-completions"),
      ...h.env,
      GUPPY_SANDBOX: "bwrap",
      GUPPY_TIMEZONE: "UTC",
      GUPPY_HEARTBEAT_SECONDS: "1",
    });
  });
  afterAll(async () => {
    if (process.env.DEBUG_ESCAPES) console.log(output().slice(-5000));
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill("SIGKILL");
      await serve.exited;
    }
    await llm?.stop();
    h?.cleanup();
  });

  it("never puts a symlinked daily note, MEMORY.md, skill or HEARTBEAT.md into a request, and logs each refusal", async () => {
    // The reproduction: an owner's bash links today's note to guppy.env (and the days around it
    // to another thread's log and the api-token).
    const note = (days: number) => {
      const day = utcDay(days);
      return join(memory(), day.slice(0, 6), `${day}.md`);
    };
    const links: Array<[string, string]> = [
      [join(h.home, "guppy.env"), note(0)],
      [h.otherThreadLog, note(-1)],
      [h.tokenFile, note(1)],
    ];
    scenarios.set("link", [
      call("ln", "bash", {
        command: links
          .map(([target, link]) => `mkdir -p ${join(link, "..")} && ln -sf ${target} ${link}`)
          .join(" && "),
      }),
    ]);
    expect((await converse("attacker", "scenario:link")).text).toBe("done");
    for (const [, link] of links) expect(readFileSync(link, "utf8")).toBeTypeOf("string");

    // Any prompt in another owner thread: its request is built from those files.
    expect((await converse("victim", "hello there")).text).toBe("You said: hello there");
    const victim = llm.requests().find((r) => JSON.stringify(r.messages).includes("hello there"));
    // The prompt was built from the home's memory (the global MEMORY.md is a plain file).
    expect(systemPrompt(victim)).toContain("The user's name is Ana.");
    const everything = JSON.stringify(llm.rawBodies());
    for (const marker of PLANTED) expect(everything, marker).not.toContain(marker);

    // One line names each file refused.
    await waitFor(
      () => (output().includes("HEARTBEAT.md") ? true : undefined),
      20_000,
      "the heartbeat's refusal",
    );
    const log = output();
    for (const refused of [
      note(0),
      join(h.home, "http", "api", "MEMORY.md"),
      join(h.home, "skills", "leak", "SKILL.md"),
      join(h.home, "skills", "leakdir", "SKILL.md"),
      join(h.home, "HEARTBEAT.md"),
    ]) {
      expect(log, refused).toMatch(new RegExp(`refused ${refused.replaceAll(".", "\\.")}`));
    }
  }, 120_000);

  it("the file tools never reach the real api-token or settings.json through a swapped folder in 1,000 reads and 1,000 writes", async () => {
    // Decoys at the path the tools use; behind the swap the same path is the home's own file.
    const x = join(memory(), "x");
    const y = join(memory(), "y");
    const homeName = h.home.slice(h.userHome.length + 1);
    mkdirSync(join(x, homeName), { recursive: true });
    writeFileSync(join(x, homeName, "api-token"), "decoy");
    writeFileSync(join(x, homeName, "settings.json"), "decoy");
    const started = join(memory(), "swapping");
    const stop = join(memory(), "stop");
    scenarios.set("swap", [
      call("swap", "bash", {
        command: [
          `ln -s ${h.userHome} ${y} &&`,
          `perl -e 'my ($x, $y, $started, $stop) = @ARGV; open(my $f, ">", $started); close $f;`,
          `until (-e $stop) { syscall(316, -100, $x, -100, $y, 2) for 1 .. 200 }'`,
          `${x} ${y} ${started} ${stop} && echo stopped`,
        ].join(" "),
        timeout_seconds: 600,
      }),
    ]);
    // 1,000 reads and 1,000 writes, 100 a turn in ten threads of each (one turn of 1,000 calls
    // would not fit the model's context window).
    const threads = 10;
    const each = 100;
    const token = join(x, homeName, "api-token");
    const settings = join(x, homeName, "settings.json");
    const turns: Array<Promise<unknown>> = [];
    const swapping = converse("swapper", "scenario:swap", 300_000);
    await waitFor(() => (existsSync(started) ? true : undefined), 60_000, "the swap loop");
    for (let t = 0; t < threads; t++) {
      scenarios.set(
        `reads${t}`,
        Array.from({ length: each }, (_, i) => call(`r${t}_${i}`, "read", { path: token })),
      );
      scenarios.set(
        `writes${t}`,
        Array.from({ length: each }, (_, i) =>
          call(`w${t}_${i}`, "write", { path: settings, content: `pwned ${i}` }),
        ),
      );
      turns.push(converse(`reader${t}`, `scenario:reads${t}`, 240_000));
      turns.push(converse(`writer${t}`, `scenario:writes${t}`, 240_000));
    }
    await Promise.all(turns);
    writeFileSync(stop, "");
    expect((await swapping).text).toBe("done");
    expect(toolResults(requestWithResult(llm.requests(), "swap")).get("swap")).toContain("stopped");

    let refused = 0;
    let written = 0;
    for (let t = 0; t < threads; t++) {
      const reads = toolResults(requestWithResult(llm.requests(), `r${t}_0`));
      const writes = toolResults(requestWithResult(llm.requests(), `w${t}_0`));
      for (let i = 0; i < each; i++) {
        const text = reads.get(`r${t}_${i}`);
        expect(text, `read ${t}/${i}`).toBeDefined();
        expect(text, `read ${t}/${i}`).not.toContain(API_TOKEN.slice(0, 12));
        if (text?.includes("decoy")) continue;
        expect(text, `read ${t}/${i}`).toMatch(/changed while in use|outside|refused|not found/i);
        refused++;
      }
      for (let i = 0; i < each; i++) {
        if (writes.get(`w${t}_${i}`)?.startsWith("Wrote ")) written++;
      }
    }
    // Writes that went through landed on the decoy, inside the sandbox's view.
    expect(written).toBeGreaterThan(0);
    // The swap raced the reads: some were refused (none of them read the token).
    expect(refused).toBeGreaterThan(0);
    expect(readFileSync(h.settingsFile, "utf8")).toContain(SETTINGS_KEY);
    expect(readFileSync(h.settingsFile, "utf8")).not.toContain("pwned");
    expect(readFileSync(h.tokenFile, "utf8")).toContain(API_TOKEN);
    expect(JSON.stringify(llm.rawBodies())).not.toContain(API_TOKEN);
  }, 300_000);
});
