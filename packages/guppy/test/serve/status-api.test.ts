import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, waitFor } from "./serve-harness.js";

interface StatusJson {
  memory: { rss_bytes: number; heap_used_bytes: number };
  recent_errors: Array<{ time: string; level: string; message: string }>;
}

/**
 * GET /v1/status's `memory` and `recent_errors` (issue 38 item 6) through `guppy serve`: a
 * provider's 500 is logged as a run's error and listed, and `guppy status` shows both.
 */
describe("GET /v1/status memory and recent errors (guppy serve + aimock)", () => {
  let llm: MockLlm;
  let serve: ServeProcess;
  const home = tempHome();

  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const text = requestText({
        ...request,
        messages: [lastMessage(request)].flatMap((m) => (m ? [m] : [])),
      });
      if (text.includes("please fail")) {
        return { error: { message: "the model broke", type: "server_error" }, status: 500 };
      }
      return { content: "fine" };
    });
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      GUPPY_MAX_RETRIES: "0",
      GUPPY_SANDBOX: "host",
    });
  });
  afterAll(async () => {
    serve?.child.kill("SIGTERM");
    await serve?.exited;
    await llm?.stop();
    home.cleanup();
  });

  it("needs the token", async () => {
    expect((await fetch(`${serve.url}/v1/status`)).status).toBe(401);
  });

  it("gives the process's memory, and a provider's failure among the recent errors", async () => {
    const first = (await (await serve.api("/v1/status")).json()) as StatusJson;
    expect(first.memory.rss_bytes).toBeGreaterThan(20_000_000);
    expect(first.memory.heap_used_bytes).toBeGreaterThan(1_000_000);
    expect(first.memory.heap_used_bytes).toBeLessThan(first.memory.rss_bytes);
    expect(first.recent_errors.filter((e) => e.message.includes("the model broke"))).toEqual([]);

    const sent = await serve.api("/v1/threads/http:api:status/messages", {
      method: "POST",
      body: JSON.stringify({ text: "please fail", user: "tester" }),
    });
    expect(sent.status).toBe(202);
    const failed = await waitFor(
      async () => {
        const s = (await (await serve.api("/v1/status")).json()) as StatusJson;
        return s.recent_errors.find((e) => e.message.includes("the model broke"));
      },
      30_000,
      "the provider's 500 in recent_errors",
    );
    expect(failed.level).toBe("error");
    expect(failed.message).toContain("http:api:status");
    expect(Date.now() - Date.parse(failed.time)).toBeLessThan(120_000);

    const plain = await runCli(["status"], {
      env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home }),
    });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/\nmemory {4}\d+\.\d MB RSS, \d+\.\d MB heap\n/);
    expect(plain.stdout).toMatch(
      /\nproblems {2}\d+ recent warning\(s\)\/error\(s\), last at .*the model broke/,
    );
  });
});
