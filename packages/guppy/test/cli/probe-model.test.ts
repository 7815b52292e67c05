import { resolveModel } from "@guppy/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeModel } from "../../src/commands/probe-model.js";
import { freePort } from "../helpers/free-port.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";

describe("probeModel (a tiny request against aimock)", () => {
  let llm: MockLlm;
  beforeAll(async () => {
    llm = await startMockLlm((request) =>
      JSON.stringify(request).includes("bad-model")
        ? { error: { message: "invalid x-api-key", type: "authentication_error" }, status: 401 }
        : { content: "ok" },
    );
  });
  afterAll(() => llm.stop());

  const resolve = (
    model: string,
    baseUrl: string,
    api: "openai-completions" | "anthropic-messages",
  ) => resolveModel({ model, baseUrl, api, apiKey: "k" }, { env: {} });

  it("answers ok when the endpoint answers", async () => {
    const r = await probeModel(await resolve("openai/m", `${llm.url}/v1`, "openai-completions"));
    expect(r.ok).toBe(true);
  });

  it("names the URL, status and the provider's message when the key is refused", async () => {
    const r = await probeModel(
      await resolve("openai/bad-model", `${llm.url}/v1`, "openai-completions"),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toContain(`${llm.url}/v1 answered: 401`);
    expect(r.problem).toContain("invalid x-api-key");
    expect(r.problem).toContain("the key was refused");
  });

  it("names an unreachable endpoint and hints at an Anthropic URL ending in /v1", async () => {
    const port = await freePort();
    const r = await probeModel(
      await resolve("anthropic/c", `http://127.0.0.1:${port}/v1`, "anthropic-messages"),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toContain(`cannot reach the model at http://127.0.0.1:${port}/v1`);
    expect(r.problem).toContain("drop the /v1");
  });
});
