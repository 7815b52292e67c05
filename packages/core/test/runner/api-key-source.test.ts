import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import type { ApiKeySource } from "../../src/runner/create-stream-fn.js";
import { createStore, type Store } from "../../src/store/create-store.js";

/** A Chat Completions endpoint that answers every request and remembers its Authorization header. */
describe("the model's key, asked at each request (real HTTP)", () => {
  let home: string;
  let store: Store;
  let server: Server;
  const seen: string[] = [];

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), "guppy-key-source-"));
    store = createStore({ home });
    seen.length = 0;
    server = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: "assistant", content: "ok" }, null));
        res.write(chunk({}, "stop"));
        res.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(home, { recursive: true, force: true });
  });

  const runner = (apiKey: ApiKeySource) => {
    const model: Model<Api> = {
      id: "m",
      name: "m",
      api: "openai-completions",
      provider: "test",
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 100_000,
      maxTokens: 1000,
    };
    return createAgentRunner({
      threadId: "cli:local:keys",
      store,
      model,
      apiKey,
      systemPrompt: "test",
      tools: [],
      maxToolRounds: 5,
      maxRetries: 0,
    });
  };

  it("sends the key the source gives at that request, sync or async", async () => {
    let current = "first-key";
    const r = runner(async () => current);
    expect((await r.prompt({ text: "one" })).text).toBe("ok");
    current = "second-key";
    expect((await r.prompt({ text: "two" })).text).toBe("ok");
    expect(seen).toEqual(["Bearer first-key", "Bearer second-key"]);

    const s = runner(() => "plain-key");
    await s.prompt({ text: "three" });
    expect(seen[2]).toBe("Bearer plain-key");
  });

  it("fails the request with the source's message, making none, when it throws", async () => {
    const r = runner(async () => {
      throw new Error("The sign-in expired: run `guppy login anthropic`.");
    });
    const result = await r.prompt({ text: "hi" });
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toBe("The sign-in expired: run `guppy login anthropic`.");
    expect(seen).toEqual([]);
  });
});
