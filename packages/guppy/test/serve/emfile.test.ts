import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockLlm } from "../helpers/mock-llm.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "./serve-harness.js";

/** util-linux's prlimit starts a command under a given open-files limit. */
const hasPrlimit = (() => {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** Open-files limit of the gateway (soft = hard: Node cannot raise it). */
const LIMIT = 300;
/** Concurrent requests, each on its own thread: twice the limit. */
const REQUESTS = 600;

type Outcome =
  | { kind: "answered"; status: number; retryAfter: string | null; body: string }
  | { kind: "failed"; error: string };

describe.skipIf(!hasPrlimit)("guppy serve under an open-files limit", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it(`answers ${REQUESTS} concurrent requests on distinct threads with ulimit -n ${LIMIT}: each is run or refused with 503 and retry-after, no accepted run fails, and the process stays up`, async () => {
    const llm = await startMockLlm(() => ({ content: "fine" }));
    stops.push(() => llm.stop());
    const home = mkdtempSync(join(tmpdir(), "guppy-emfile-"));
    stops.push(() => rmSync(home, { recursive: true, force: true }));
    const s: ServeProcess = await startServe(
      home,
      { ...llm.env("openai-completions"), GUPPY_SANDBOX: "host", GUPPY_MAX_RETRIES: "0" },
      { prefix: ["prlimit", `--nofile=${LIMIT}:${LIMIT}`] },
    );
    stops.push(async () => {
      s.child.kill("SIGTERM");
      await s.exited;
    });
    const pid = s.child.pid as number;
    expect(readFileSync(`/proc/${pid}/limits`, "utf8")).toMatch(
      new RegExp(`^Max open files\\s+${LIMIT}\\s+${LIMIT}`, "m"),
    );

    const headers = { authorization: `Bearer ${s.token}`, "content-type": "application/json" };
    const answered = async (response: Response): Promise<Outcome> => ({
      kind: "answered",
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: await response.text(),
    });
    // Half OpenAI-style completions (the answer in the response), half guppy's own messages
    // (202 once the prompt is saved; the answer lands in the thread).
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i): Promise<Outcome> => {
        try {
          if (i % 2 === 0) {
            return await answered(
              await fetch(`${s.url}/v1/chat/completions`, {
                method: "POST",
                headers: { ...headers, "x-guppy-thread": `c${i}` },
                body: JSON.stringify({ messages: [{ role: "user", content: `question ${i}` }] }),
              }),
            );
          }
          return await answered(
            await fetch(`${s.url}/v1/threads/http:api:m${i}/messages`, {
              method: "POST",
              headers,
              body: JSON.stringify({ text: `question ${i}` }),
            }),
          );
        } catch (error) {
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          return { kind: "failed", error: cause?.code ?? cause?.message ?? String(error) };
        }
      }),
    );

    // Every request got an answer: none was reset or dropped.
    const failed = outcomes.filter((o) => o.kind === "failed");
    expect(failed).toEqual([]);
    const results = outcomes.map((o, i) => ({
      i,
      ...(o as Extract<Outcome, { kind: "answered" }>),
    }));
    // Each was run, or refused before it was accepted with 503 and a retry-after.
    const refused = results.filter((r) => r.status === 503);
    for (const r of refused) {
      expect(r.retryAfter).toMatch(/^[1-9][0-9]*$/);
      expect(JSON.parse(r.body).error.type).toBe("unavailable");
    }
    const completions = results.filter((r) => r.i % 2 === 0 && r.status !== 503);
    const messages = results.filter((r) => r.i % 2 === 1 && r.status !== 503);
    // Some get through: the limit leaves room for runs.
    expect(completions.length + messages.length).toBeGreaterThan(0);
    // Accepted completions carry their answer, not an error (EMFILE opening the thread's files
    // answered 502 before).
    for (const r of completions) {
      expect({ i: r.i, status: r.status, body: r.body }).toMatchObject({ status: 200 });
      expect(JSON.parse(r.body).choices[0].message.content).toBe("fine");
    }
    // Accepted messages are answered in their thread.
    for (const r of messages) expect({ i: r.i, status: r.status }).toEqual({ i: r.i, status: 202 });
    for (const r of messages) {
      const log = await waitFor(
        async () => {
          const m = await threadMessages(s, `http:api:m${r.i}`);
          return m.some((x) => x.is_bot) ? m : undefined;
        },
        120_000,
        `the answer in http:api:m${r.i}`,
      );
      expect(log.map((m) => m.text)).toEqual([`question ${r.i}`, "fine"]);
    }

    // Still up and serving, and nothing ran into the limit.
    expect(s.child.exitCode).toBeNull();
    const after = await s.api("/v1/chat/completions", {
      method: "POST",
      headers: { "x-guppy-thread": "after" },
      body: JSON.stringify({ messages: [{ role: "user", content: "still there?" }] }),
    });
    expect(after.status).toBe(200);
    const gatewayLog = readFileSync(join(home, "logs", "gateway.log"), "utf8");
    expect(gatewayLog).not.toMatch(/EMFILE|ENFILE/);
    expect(gatewayLog).toMatch(/answering 503/);
  }, 300_000);
});
