import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAiProblems } from "../../../core/test/context/wire-check.js";
import { type MockLlm, requestText, startMockLlm, type WireApi } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/**
 * A 60-turn session through `guppy chat -m` against aimock with an 8,000-token window.
 * A "turn" is one model request answered by a bash call whose output is 5–50 KB. To stay fast
 * the 60 turns run in 3 CLI invocations of 20 tool rounds each (one process per invocation, the
 * thread's context reloaded from disk between them) instead of 60 processes.
 * GUPPY_TOOL_RESULT_MAX_CHARS is 3,000 here (default 10,000): with an 8,000-token window a
 * 10,000-char excerpt (~3,500 tokens) would fill most of the budget by itself.
 */
const WINDOW = 8_000;
const INVOCATIONS = 3;
const ROUNDS = 20;
const SUMMARY_MARK = "You are the context compactor";

type Kind = "main" | "summary";
interface Entry {
  kind: Kind;
  index: number;
  outcome: "answered" | "error";
}

describe.each<WireApi>(["openai-completions", "anthropic-messages"])(
  "a 60-turn session in an 8,000-token window over %s",
  (api) => {
    let llm: MockLlm;
    const home = tempHome();
    const session = "long";
    const entries: Entry[] = [];
    let roundsLeft = 0;
    let turn = 0;
    let summaries = 0;
    let overflowInjected = false;
    const results: { code: number | null; stdout: string; stderr: string }[] = [];

    const respond = (request: ChatCompletionRequest, index: number): FixtureResponse => {
      const system = request.messages.find((m) => m.role === "system");
      const isSummary = requestText({ ...request, messages: system ? [system] : [] }).includes(
        SUMMARY_MARK,
      );
      const usage = (n: number) => ({
        prompt_tokens: n,
        completion_tokens: 30,
        total_tokens: n + 30,
        input_tokens: n,
        output_tokens: 30,
      });
      const tokens = countTokens(requestText(request)) + 4 * request.messages.length;
      if (isSummary) {
        summaries++;
        if (summaries === 2) {
          entries.push({ kind: "summary", index, outcome: "error" });
          return {
            error: { message: "summariser overloaded", type: "invalid_request_error" },
            status: 400,
          };
        }
        entries.push({ kind: "summary", index, outcome: "answered" });
        return {
          content: `## Goal\n- finish the dump rounds\n## Progress\n- SUMMARY-${summaries}: rounds so far produced long listings\n## Open items\n- keep going`,
          usage: usage(tokens),
        };
      }
      turn++;
      // Once, late in the session and on a well-filled context, the provider says it is too long.
      if (turn >= 45 && tokens >= 2_500 && !overflowInjected) {
        overflowInjected = true;
        entries.push({ kind: "main", index, outcome: "error" });
        return {
          error: {
            message:
              "This model's maximum context length is 8000 tokens. However, your messages resulted in 9120 tokens.",
            type: "invalid_request_error",
            code: "context_length_exceeded",
          },
          status: 400,
        };
      }
      entries.push({ kind: "main", index, outcome: "answered" });
      if (roundsLeft > 0) {
        roundsLeft--;
        const size = 5_000 + ((turn * 7_919) % 45_001);
        return {
          toolCalls: [
            {
              name: "bash",
              arguments: JSON.stringify({
                command: `seq -f 'turn-${turn} listing line %g' 1 100000 | head -c ${size}`,
              }),
            },
          ],
          usage: usage(tokens),
        };
      }
      return { content: `rounds complete at turn ${turn}`, usage: usage(tokens) };
    };

    const env = () =>
      cleanEnv({
        ...llm.env(api),
        GUPPY_HOME: home.home,
        GUPPY_CONTEXT_WINDOW: String(WINDOW),
        GUPPY_TOOL_RESULT_MAX_CHARS: "3000",
        GUPPY_MAX_TOOL_ROUNDS: "100",
        GUPPY_MAX_RETRIES: "0",
      });

    beforeAll(async () => {
      llm = await startMockLlm(respond);
      for (let i = 0; i < INVOCATIONS; i++) {
        roundsLeft = ROUNDS;
        results.push(
          await runCli(
            ["chat", "-m", `invocation ${i}: run the dump rounds`, "--session", session],
            {
              env: env(),
              timeoutMs: 60_000,
            },
          ),
        );
      }
    }, 120_000);
    afterAll(async () => {
      await llm.stop();
      home.cleanup();
    });

    it("completes every invocation: 60 tool turns, each answered", () => {
      for (const r of results) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^rounds complete at turn \d+\n$/);
      }
      const toolTurns = llm
        .requests()
        .filter((_, i) => entries[i]?.kind === "main" && entries[i]?.outcome === "answered");
      expect(toolTurns.length).toBe(INVOCATIONS * (ROUNDS + 1));
    });

    it("never sends a request that exceeds the window, and every request pairs its tool calls", () => {
      const requests = llm.requests();
      const bodies = llm.rawBodies();
      expect(bodies.length).toBe(requests.length);
      expect(requests.length).toBeGreaterThan(60);
      for (const [i, request] of requests.entries()) {
        const body = bodies[i] as { max_tokens?: number; max_completion_tokens?: number };
        const reply = body.max_tokens ?? body.max_completion_tokens ?? 0;
        const input =
          countTokens(requestText(request)) +
          countTokens(JSON.stringify(request.tools ?? [])) +
          4 * request.messages.length;
        expect(input + reply, `request ${i}`).toBeLessThanOrEqual(WINDOW);
        // aimock journals every request in its OpenAI chat shape (Anthropic tool_use/tool_result
        // blocks become tool_calls/tool messages), so the pairing check reads that shape for both
        // wires; the Anthropic request bodies themselves are checked in the core property tests.
        expect(openAiProblems(bodies[i]), `request ${i}`).toEqual([]);
        const first = request.messages.find((m) => m.role !== "system");
        expect(first?.role, `request ${i}`).toBe("user");
      }
    });

    it("compacted with LLM summaries, and the summaries were used by later requests", () => {
      const requests = llm.requests();
      const answered = entries.filter((e) => e.kind === "summary" && e.outcome === "answered");
      expect(answered.length).toBeGreaterThanOrEqual(3);
      const lastSummary = answered.length + 1; // numbering counts the failed one too
      const later = requests.slice(answered.at(-1)!.index + 1);
      expect(later.length).toBeGreaterThan(0);
      expect(requestText(later[0]!)).toContain(`SUMMARY-${lastSummary}`);
      // A later summary request updates the earlier summary.
      const updating = requests.filter(
        (r, i) => entries[i]?.kind === "summary" && requestText(r).includes("<previous-summary>"),
      );
      expect(updating.length).toBeGreaterThan(0);
    });

    it("fell back safely when a summary request failed, and said so in the log and /status", async () => {
      const failed = entries.find((e) => e.kind === "summary" && e.outcome === "error");
      expect(failed).toBeDefined();
      // The run went on: the next request is a main request that was answered.
      expect(entries[failed!.index + 1]).toMatchObject({ kind: "main" });
      const stderr = results.map((r) => r.stderr).join("");
      expect(stderr).toMatch(
        /summary failed \(.*summariser overloaded.*\); dropped the \d+ oldest/,
      );
      const status = await runCli(["chat", "--session", session], {
        env: env(),
        input: "/status\n/exit\n",
      });
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/compactions\s+\d+ \(1 fell back to dropping old turns/);
      expect(status.stdout).toMatch(/context\s+[\d,]+ \/ 8,000 tokens/);
    });

    it("recovered from an injected 'context length exceeded' by compacting and retrying once", () => {
      const at = entries.findIndex((e) => e.kind === "main" && e.outcome === "error");
      expect(at).toBeGreaterThan(0);
      expect(entries[at + 1]).toMatchObject({ kind: "summary", outcome: "answered" });
      expect(entries[at + 2]).toMatchObject({ kind: "main", outcome: "answered" });
      const size = (r: ChatCompletionRequest) => countTokens(requestText(r));
      const requests = llm.requests();
      expect(size(requests[at + 2]!)).toBeLessThan(size(requests[at]!));
      const stderr = results.map((r) => r.stderr).join("");
      expect(stderr).toMatch(/context of cli:local:long is too long; compacting and retrying/);
      // Only the one injected error reached the model's answers: the retry succeeded.
      expect(entries.filter((e) => e.kind === "main" && e.outcome === "error")).toHaveLength(1);
    });

    it("rewrote context.jsonl with the summary first and never compacted log.jsonl", () => {
      const dir = join(home.home, "cli", "local", session);
      const context = readFileSync(join(dir, "context.jsonl"), "utf8").trim().split("\n");
      expect(JSON.parse(context[0]!).role).toBe("compaction");
      const log = readFileSync(join(dir, "log.jsonl"), "utf8").trim().split("\n");
      expect(log.map((l) => JSON.parse(l).isBot)).toEqual([false, true, false, true, false, true]);
    });
  },
);
