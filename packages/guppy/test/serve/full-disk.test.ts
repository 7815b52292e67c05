import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { lastMessage, startMockLlm } from "../helpers/mock-llm.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "./serve-harness.js";

/** A small tmpfs of our own (root only, as CI runs): a disk that can really fill up. */
function mountTmpfs(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "guppy-fulldisk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

const mount = mountTmpfs();

/** The inbox journal's lines of one thread's prompts: accepted ids, and the ids marked done. */
function inboxOf(home: string, threadId: string): { accepted: string[]; done: string[] } {
  const lines = readFileSync(join(home, "inbox.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { t: string; id: string; threadId?: string }];
      } catch {
        return [];
      }
    });
  const accepted = lines.filter((l) => l.t === "accepted" && l.threadId === threadId);
  const ids = new Set(accepted.map((l) => l.id));
  return {
    accepted: accepted.map((l) => l.id),
    done: lines.filter((l) => l.t === "done" && ids.has(l.id)).map((l) => l.id),
  };
}

/** A long answer: more than the slack left in the last page of any file on the full tmpfs. */
const LONG_ANSWER = `the answer: ${"all of it ".repeat(1500)}`;

describe.skipIf(!mount)("guppy serve on a full disk", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  afterAll(() => {
    execFileSync("umount", [mount as string]);
    rmSync(mount as string, { recursive: true, force: true });
  });

  it("answers 507 for a prompt it cannot save and runs nothing; once there is room it works again", async () => {
    const dir = mount as string;
    const llm = await startMockLlm(() => ({ content: "the answer" }));
    stops.push(() => llm.stop());
    const home = join(dir, "home");
    mkdirSync(home);
    const s: ServeProcess = await startServe(home, {
      ...llm.env("openai-completions"),
      GUPPY_SANDBOX: "host",
    });
    stops.push(async () => {
      s.child.kill("SIGTERM");
      await s.exited;
    });
    const post = (text: string) =>
      s.api("/v1/threads/http:api:disk/messages", {
        method: "POST",
        body: JSON.stringify({ text }),
      });
    // Fill the disk.
    const filler = join(dir, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    }
    const refused = await post("hello on a full disk");
    expect(refused.status).toBe(507);
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("insufficient_storage");
    expect(body.error.message).toMatch(/could not be saved/);
    // Nothing ran: the model was never asked, and the thread has no answer.
    await new Promise((r) => setTimeout(r, 1000));
    expect(llm.requests()).toHaveLength(0);
    expect(s.stdout()).toMatch(/could not be saved, so it was not run/);
    // Room again: the next prompt is saved, run and answered.
    rmSync(filler);
    const accepted = await post("hello again");
    expect(accepted.status).toBe(202);
    const messages = await waitFor(async () => {
      const m = await threadMessages(s, "http:api:disk");
      return m.some((x) => x.is_bot) ? m : undefined;
    });
    expect(messages.map((m) => m.text)).toEqual(["hello again", "the answer"]);
  });

  it("keeps an answer it cannot save pending in the inbox and writes it once there is room", async () => {
    const dir = mount as string;
    const filler = join(dir, "filler");
    stops.push(() => rmSync(filler, { force: true }));
    // The prompt is saved while there is room; its run fills the disk (a tool), then answers.
    const llm = await startMockLlm((request) =>
      lastMessage(request)?.role === "tool"
        ? { content: LONG_ANSWER }
        : {
            toolCalls: [
              {
                name: "bash",
                arguments: JSON.stringify({
                  command: `dd if=/dev/zero of=${filler} bs=64k 2>/dev/null; echo filled`,
                }),
              },
            ],
          },
    );
    stops.push(() => llm.stop());
    const home = join(dir, "home-answer");
    mkdirSync(home);
    stops.push(() => rmSync(home, { recursive: true, force: true }));
    const s: ServeProcess = await startServe(home, {
      ...llm.env("openai-completions"),
      GUPPY_SANDBOX: "host",
    });
    stops.push(async () => {
      s.child.kill("SIGTERM");
      await s.exited;
    });
    const thread = "http:api:answer";
    const accepted = await s.api(`/v1/threads/${thread}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "fill the disk, then answer" }),
    });
    expect(accepted.status).toBe(202);
    // The run ends (the model was asked twice: the tool call, then the answer after it) and its
    // answer could not be written: the gateway log says so in one line.
    await waitFor(
      () => (/answer for http:api:answer not saved/.test(s.stdout()) ? true : undefined),
      30_000,
      "the not-saved line",
    );
    expect(llm.requests()).toHaveLength(2);
    expect(s.stdout()).toMatch(
      /answer for http:api:answer not saved \(disk full\?\); kept pending, retrying/,
    );
    // Not marked done: the prompt stays pending in the inbox (a restart would report it).
    const whileFull = inboxOf(home, thread);
    expect(whileFull.accepted).toHaveLength(1);
    expect(whileFull.done).toEqual([]);
    expect((await threadMessages(s, thread)).some((m) => m.is_bot)).toBe(false);
    // Room again: the kept lines are written (at the next retry), then the prompt is done.
    rmSync(filler);
    const messages = await waitFor(
      async () => {
        const m = await threadMessages(s, thread);
        return m.some((x) => x.is_bot) ? m : undefined;
      },
      30_000,
      "the answer in GET …/messages",
    );
    expect(messages.map((m) => m.text)).toEqual(["fill the disk, then answer", LONG_ANSWER]);
    await waitFor(
      () => (inboxOf(home, thread).done.length === 1 ? true : undefined),
      30_000,
      "the done line",
    );
    expect(inboxOf(home, thread).done).toEqual(whileFull.accepted);
    // The gateway log (its file: an info line) says it was saved after all.
    await waitFor(
      () =>
        /answer for http:api:answer saved/.test(
          readFileSync(join(home, "logs", "gateway.log"), "utf8"),
        )
          ? true
          : undefined,
      10_000,
      "the saved line in gateway.log",
    );
    const context = readFileSync(join(home, "http", "api", "answer", "context.jsonl"), "utf8");
    expect(context).toContain("all of it all of it");
  }, 120_000);

  it("a restart before the answer could be saved reports the prompt once there is room: nothing accepted is lost", async () => {
    const dir = mount as string;
    const filler = join(dir, "filler");
    stops.push(() => rmSync(filler, { force: true }));
    const llm = await startMockLlm((request) =>
      lastMessage(request)?.role === "tool"
        ? { content: LONG_ANSWER }
        : {
            toolCalls: [
              {
                name: "bash",
                arguments: JSON.stringify({
                  command: `dd if=/dev/zero of=${filler} bs=64k 2>/dev/null; echo filled`,
                }),
              },
            ],
          },
    );
    stops.push(() => llm.stop());
    const home = join(dir, "home-restart");
    mkdirSync(home);
    stops.push(() => rmSync(home, { recursive: true, force: true }));
    const env = { ...llm.env("openai-completions"), GUPPY_SANDBOX: "host" };
    const first = await startServe(home, env);
    const thread = "http:api:restart";
    const accepted = await first.api(`/v1/threads/${thread}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "fill the disk, then stop" }),
    });
    expect(accepted.status).toBe(202);
    await waitFor(
      () => (/answer for http:api:restart not saved/.test(first.stdout()) ? true : undefined),
      30_000,
      "the not-saved line",
    );
    // Stopped while the disk is still full: the answer is lost, the prompt is not.
    first.child.kill("SIGTERM");
    await first.exited;
    expect(inboxOf(home, thread).done).toEqual([]);
    rmSync(filler);
    const second = await startServe(home, env);
    stops.push(async () => {
      second.child.kill("SIGTERM");
      await second.exited;
    });
    // Its run had called a tool: reported, not run again.
    const messages = await waitFor(
      async () => {
        const m = await threadMessages(second, thread);
        return m.some((x) => x.is_bot) ? m : undefined;
      },
      30_000,
      "the report in GET …/messages",
    );
    expect(messages[0]?.text).toBe("fill the disk, then stop");
    expect(messages.find((m) => m.is_bot)?.text).toMatch(
      /guppy stopped while working on your message/,
    );
    await waitFor(
      () => (inboxOf(home, thread).done.length === 1 ? true : undefined),
      30_000,
      "the done line",
    );
    expect(llm.requests()).toHaveLength(2);
  }, 120_000);
});
