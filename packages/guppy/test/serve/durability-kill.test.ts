import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type LogMessage,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/**
 * The durability runs of the hostile pass (issue 33: 1,040 prompts over 7 kill -9 cycles, none
 * lost or duplicated) kept at a modest size: 60 prompts over 6 threads, the gateway SIGKILLed 3
 * times while they run — once as they are being posted, once as tool commands run, once a while
 * into the runs — and started again on the same home each time. Every prompt must end up in its
 * thread's log once, with one answer or one "interrupted" report (a run that had called tools is
 * reported, not run again), and no tool command may run twice for one prompt.
 */

const THREADS = 6;
const PROMPTS = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const tag = (i: number) => `[p${String(i).padStart(2, "0")}]`;
const threadOf = (i: number) => `http:api:dur${i % THREADS}`;
/** Every other prompt of a thread calls bash, which appends the prompt's tag to the marker file. */
const usesTool = (i: number) => Math.floor(i / THREADS) % 2 === 0;

/**
 * The model: a tool result is answered with its first line; a prompt "… run-bash CMD" asks for
 * bash; anything else is echoed. Each answer comes 40–240 ms late (varied, repeatable), so the
 * kills land inside runs; while `holdToolAnswers` is set, answers to tool results wait 5 s, so
 * that a kill then surely finds runs whose bash command ran.
 */
let calls = 0;
let holdToolAnswers = false;
async function script(request: ChatCompletionRequest): Promise<FixtureResponse> {
  const last = request.messages[request.messages.length - 1];
  await sleep(last?.role === "tool" && holdToolAnswers ? 5000 : 40 + ((calls++ * 37) % 200));
  if (last?.role === "tool") {
    return { content: `Tool said: ${contentText(last.content).split("\n")[0]}` };
  }
  const text = contentText(last?.content);
  const bash = /run-bash (.+)$/.exec(text);
  if (bash?.[1]) {
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: bash[1] }) }] };
  }
  return { content: `You said: ${text}` };
}

describe("guppy serve under kill -9 (durability regression)", () => {
  let llm: AsyncMockLlm;
  const { home, cleanup } = tempHome();
  const markers = join(home, "markers");
  let serve: ServeProcess | undefined;

  const promptText = (i: number) =>
    usesTool(i)
      ? `${tag(i)} run-bash echo '${tag(i)}' >> ${markers}; echo 'ran ${tag(i)}'`
      : `${tag(i)} plain`;

  const start = async () => {
    serve = await startServe(home, {
      ...llm.env(),
      GUPPY_SANDBOX: "host",
      GUPPY_QUEUE_DEPTH: String(PROMPTS),
      GUPPY_MAX_CONCURRENT: String(THREADS),
    });
    return serve;
  };
  const kill = async (s: ServeProcess) => {
    s.child.kill("SIGKILL");
    await s.exited;
  };

  /** Prompts not known to be accepted yet: posted (again) until a 202 or a 409 (already had it). */
  const pending = new Set<number>();
  const post = async (s: ServeProcess, i: number): Promise<void> => {
    try {
      const r = await s.api(`/v1/threads/${encodeURIComponent(threadOf(i))}/messages`, {
        method: "POST",
        body: JSON.stringify({ text: promptText(i), message_id: `m-${i}` }),
      });
      if (r.status === 202 || r.status === 409) pending.delete(i);
      else throw new Error(`POST of prompt ${i}: ${r.status} ${await r.text()}`);
    } catch (error) {
      // The gateway died under the request: posted again after the restart.
      if (!s.child.killed) throw error;
    }
  };
  const postAll = (s: ServeProcess, ids: number[]) => Promise.all(ids.map((i) => post(s, i)));
  const markerLines = () =>
    existsSync(markers) ? readFileSync(markers, "utf8").split("\n").filter(Boolean) : [];

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      await kill(serve);
    }
    await llm.stop();
    cleanup();
  });

  it("loses and repeats nothing: every prompt logged once with one answer or report, no tool run twice", async () => {
    for (let i = 0; i < PROMPTS; i++) pending.add(i);
    const batch = (from: number, to: number) =>
      [...pending].filter((i) => i < to && i >= from).concat([...pending].filter((i) => i < from));

    // 1: killed while the first prompts are still being posted (some accepted, some cut off).
    let s = await start();
    const posting = postAll(s, batch(0, 20));
    await waitFor(() => (pending.size <= PROMPTS - 5 ? true : undefined), 15_000, "5 accepted");
    await kill(s);
    await posting;

    // 2: killed as tool commands run (a few markers written since the start), the model yet to
    // answer their results.
    holdToolAnswers = true;
    s = await start();
    const before = markerLines().length;
    await postAll(s, batch(20, 40));
    await waitFor(
      () => (markerLines().length >= before + 3 ? true : undefined),
      20_000,
      "tool commands",
    );
    await kill(s);
    holdToolAnswers = false;
    const ranBeforeKill = markerLines().slice(before);

    // 3: killed a while into the runs, the last prompts posted.
    s = await start();
    await postAll(s, batch(40, PROMPTS));
    await sleep(700);
    await kill(s);

    // The last start: every prompt is accepted and, in the end, answered or reported.
    s = await start();
    await postAll(s, [...pending]);
    expect(pending.size).toBe(0);
    const byThread = await waitFor(
      async () => {
        const logs: LogMessage[][] = [];
        for (let t = 0; t < THREADS; t++) {
          const log = await threadMessages(s, `http:api:dur${t}`);
          const answered = new Set(
            log.filter((m) => m.is_bot).flatMap((m) => m.text.match(/\[p\d\d\]/) ?? []),
          );
          for (let i = t; i < PROMPTS; i += THREADS) if (!answered.has(tag(i))) return undefined;
          logs.push(log);
        }
        return logs;
      },
      40_000,
      "every prompt answered or reported",
    );
    // The last answers are logged before their runs end: let the threads go idle.
    await waitFor(async () => {
      const r = (await (await s.api("/v1/threads")).json()) as {
        threads: Array<{ state: string }>;
      };
      return r.threads.every((t) => t.state === "idle") ? true : undefined;
    }, 15_000);

    const marks = markerLines();
    const outcomes = { answered: 0, reported: 0 };
    for (let t = 0; t < THREADS; t++) {
      const api = byThread[t] as LogMessage[];
      const file = readFileSync(join(home, "http", "api", `dur${t}`, "log.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { messageId: string; text: string; isBot: boolean });
      // The API reads the same log: the same entries, none added or dropped since.
      expect(file.map((e) => e.messageId)).toEqual(api.map((m) => m.id));
      for (let i = t; i < PROMPTS; i += THREADS) {
        const prompts = file.filter((e) => !e.isBot && e.text.startsWith(`${tag(i)} `));
        expect(
          prompts.map((e) => e.messageId),
          `prompt ${i} logged once`,
        ).toEqual([`m-${i}`]);
        const replies = file.filter((e) => e.isBot && e.text.includes(tag(i)));
        expect(replies, `one answer or report for prompt ${i}`).toHaveLength(1);
        const reply = (replies[0] as { text: string }).text;
        const ran = marks.filter((m) => m === tag(i)).length;
        if (/interrupted/.test(reply)) {
          // Reported, not run again: it had called bash, which ran once at most.
          expect(reply).toMatch(/It had already run: bash .*not run again/);
          expect(ran).toBeLessThanOrEqual(1);
          outcomes.reported++;
        } else if (usesTool(i)) {
          expect(reply).toBe(`Tool said: ran ${tag(i)}`);
          expect(ran, `bash of prompt ${i} ran once`).toBe(1);
          outcomes.answered++;
        } else {
          expect(reply).toBe(`You said: ${promptText(i)}`);
          expect(ran).toBe(0);
          outcomes.answered++;
        }
      }
      // Nothing else in the log: one prompt and one reply per prompt of the thread.
      expect(file).toHaveLength((PROMPTS / THREADS) * 2);
    }
    expect(outcomes.answered + outcomes.reported).toBe(PROMPTS);
    // The runs killed after their bash command ran (the model yet to answer) were reported.
    for (const mark of ranBeforeKill) {
      const t = Number(mark.slice(2, 4)) % THREADS;
      const replies = (byThread[t] as LogMessage[]).filter(
        (m) => m.is_bot && m.text.includes(mark),
      );
      expect(replies[0]?.text, `${mark} reported`).toMatch(/interrupted/);
    }
    // No marker of a prompt that is not one of ours, and none twice.
    expect(new Set(marks).size).toBe(marks.length);
  }, 90_000);
});
