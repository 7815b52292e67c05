import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getModels, getProviders } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { MIN_CONTEXT_WINDOW } from "../../src/config/settings-schema.js";
import {
  closestModelId,
  DEFAULT_CUSTOM_CONTEXT_WINDOW,
  discoverLocalModel,
  noModelMessage,
  resolveModel,
} from "../../src/model/resolve-model.js";

const none = async () => undefined;

describe("resolveModel", () => {
  it("prices a custom endpoint's requests with modelCost", async () => {
    const modelCost = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 };
    const r = await resolveModel(
      { model: "openai/my-model", baseUrl: "http://127.0.0.1:9/v1", modelCost },
      { env: {}, discover: none },
    );
    expect(r.model.cost).toEqual(modelCost);
  });

  it("sends an uncatalogued id as is to a custom endpoint over the chosen protocol", async () => {
    const r = await resolveModel(
      {
        model: "openai/my-finetune:v3",
        baseUrl: "http://127.0.0.1:9/v1",
        api: "openai-completions",
      },
      { env: {}, discover: none },
    );
    expect(r.model).toMatchObject({
      id: "my-finetune:v3",
      provider: "openai",
      api: "openai-completions",
      baseUrl: "http://127.0.0.1:9/v1",
    });
    expect(r.custom).toBe(true);
    expect(r.model.contextWindow).toBe(32_768);
  });

  it("defaults an anthropic/ custom endpoint to anthropic-messages and keeps ids with slashes", async () => {
    const r = await resolveModel(
      { model: "anthropic/vendor/claude-x", baseUrl: "http://127.0.0.1:9", contextWindow: 9000 },
      { env: {}, discover: none },
    );
    expect(r.model.api).toBe("anthropic-messages");
    expect(r.model.id).toBe("vendor/claude-x");
    expect(r.model.contextWindow).toBe(9000);
    expect(r.maxTokens).toBeLessThanOrEqual(9000 / 4);
  });

  it("uses the catalog for a hosted model and its key from GUPPY_API_KEY", async () => {
    const r = await resolveModel(
      { model: "anthropic/claude-sonnet-4-5", apiKey: "k", maxTokens: 1234 },
      { env: {}, discover: none },
    );
    expect(r.model.contextWindow).toBeGreaterThan(100_000);
    expect(r.model.cost.input).toBeGreaterThan(0);
    expect(r.maxTokens).toBe(1234);
    expect(r.apiKey).toBe("k");
  });

  it("says which variable holds the key when it is missing", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      await expect(
        resolveModel({ model: "anthropic/claude-sonnet-4-5" }, { env: {}, discover: none }),
      ).rejects.toThrow(/set ANTHROPIC_API_KEY \(or GUPPY_API_KEY\)/);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it("suggests the closest catalog id for a mistyped model, in one line", async () => {
    const typo = resolveModel({ model: "openai/gpt-4o-mnii", apiKey: "k" }, { discover: none });
    await expect(typo).rejects.toThrow(
      /^Model "gpt-4o-mnii" is not in pi-ai's catalog for openai \(did you mean "openai\/gpt-4o-mini"\?\); to use it anyway set GUPPY_BASE_URL to the provider's endpoint\.$/,
    );
    // A typo, and an id cut short of its date: the catalog's ids meant.
    const ids = getModels("anthropic").map((m) => m.id);
    expect(closestModelId("claude-sonet-4-5", ids)).toBe("claude-sonnet-4-5");
    expect(closestModelId("claude-haiku-4-5-2025", ids)).toBe("claude-haiku-4-5-20251001");
    // Nothing close: a few ids as examples instead.
    await expect(
      resolveModel({ model: "openai/zzzzzzzzzz", apiKey: "k" }, { discover: none }),
    ).rejects.toThrow(/\(e\.g\. [^)]+\)/);
  });

  it("rejects an unknown provider or model with one line and a way out", async () => {
    await expect(
      resolveModel({ model: "nosuch/x", apiKey: "k" }, { discover: none }),
    ).rejects.toThrow(/Unknown provider "nosuch".*GUPPY_BASE_URL/);
    await expect(
      resolveModel({ model: "openai/gpt-nope", apiKey: "k" }, { discover: none }),
    ).rejects.toThrow(/not in pi-ai's catalog.*GUPPY_BASE_URL/);
    await expect(
      resolveModel(
        { model: "openai/gpt-4o", api: "openai-completions", apiKey: "k" },
        { discover: none },
      ),
    ).rejects.toBeInstanceOf(ConfigError);
  });

  it.each([
    ["settings", '"api": "openai-completions" in /home/me/.guppy/settings.json'],
    ["env", "GUPPY_API=openai-completions"],
    ["flag", "--api=openai-completions"],
  ] as const)("names where an API without a base URL was set (%s)", async (source, named) => {
    await expect(
      resolveModel(
        {
          model: "openai/gpt-4o",
          api: "openai-completions",
          apiKey: "k",
          sources: { api: source, model: "settings" },
          settingsPath: "/home/me/.guppy/settings.json",
        },
        { discover: none },
      ),
    ).rejects.toThrow(
      new ConfigError(
        `${named} is set but no base URL is: the API setting only applies to a custom endpoint, given by GUPPY_BASE_URL (--base-url, "baseUrl" in settings.json).`,
      ),
    );
  });

  it("names where an unknown provider was set", async () => {
    await expect(
      resolveModel(
        { model: "nosuch/x", apiKey: "k", sources: { model: "flag" } },
        { discover: none },
      ),
    ).rejects.toThrow(/^Unknown provider "nosuch" in --model=nosuch\/x: /);
  });

  it("resolves every catalogued model with its defaults, alone or at the smallest window, keeping half the window for the prompt", async () => {
    const refs = getProviders().flatMap((p) => getModels(p).map((m) => `${p}/${m.id}`));
    expect(refs.length).toBeGreaterThan(100);
    for (const model of refs) {
      for (const contextWindow of [undefined, MIN_CONTEXT_WINDOW]) {
        for (const baseUrl of [undefined, "http://127.0.0.1:9/v1"]) {
          const r = await resolveModel(
            { model, apiKey: "k", contextWindow, baseUrl },
            { env: {}, discover: none },
          );
          expect(r.maxTokens).toBeGreaterThan(0);
          expect(r.maxTokens).toBeLessThanOrEqual(r.model.contextWindow / 2);
        }
      }
    }
  });

  it("takes a reply limit of half the window and refuses more, naming both settings", async () => {
    const settings = { model: "openai/gpt-4o", apiKey: "k", contextWindow: 8192 };
    const half = await resolveModel({ ...settings, maxTokens: 4096 }, { discover: none });
    expect(half.maxTokens).toBe(4096);
    await expect(
      resolveModel(
        {
          ...settings,
          maxTokens: 4097,
          sources: { maxTokens: "flag", contextWindow: "settings" },
          settingsPath: "/h/settings.json",
        },
        { discover: none },
      ),
    ).rejects.toThrow(
      new ConfigError(
        '--max-tokens=4097 leaves too little of the 8192-token context window ("contextWindow": 8192 in /h/settings.json) for the prompt: the reply limit may be at most half the window, 4096.',
      ),
    );
  });

  it("names the catalog or the custom-endpoint assumption when the window was not set", async () => {
    const gpt4 = getModels("openai").find((m) => m.id === "gpt-4o")!;
    await expect(
      resolveModel(
        { model: "openai/gpt-4o", apiKey: "k", maxTokens: gpt4.contextWindow },
        { discover: none },
      ),
    ).rejects.toThrow(
      `GUPPY_MAX_TOKENS=${gpt4.contextWindow} leaves too little of the ${gpt4.contextWindow}-token context window (the catalog's for openai/gpt-4o; GUPPY_CONTEXT_WINDOW (--context-window, "contextWindow" in settings.json) sets another)`,
    );
    await expect(
      resolveModel(
        { model: "openai/my-model", baseUrl: "http://127.0.0.1:9/v1", maxTokens: 20_000 },
        { discover: none },
      ),
    ).rejects.toThrow(
      `GUPPY_MAX_TOKENS=20000 leaves too little of the ${DEFAULT_CUSTOM_CONTEXT_WINDOW}-token context window (assumed for a model not in the catalog; `,
    );
  });

  it("with no model, uses a discovered local server, else names the variables to set", async () => {
    const found = await resolveModel(
      {},
      {
        discover: async () => ({
          provider: "ollama",
          baseUrl: "http://127.0.0.1:11434/v1",
          modelId: "qwen2.5:7b",
        }),
      },
    );
    expect(found.ref).toBe("ollama/qwen2.5:7b");
    expect(found.model.api).toBe("openai-completions");
    await expect(resolveModel({}, { discover: none })).rejects.toThrow(noModelMessage);
  });
});

describe("discoverLocalModel", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/v1/models") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ object: "list", data: [{ id: "llama3.2:3b" }, { id: "other" }] }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("picks the first model of the first server that answers", async () => {
    const found = await discoverLocalModel([
      { provider: "lmstudio", baseUrl: "http://127.0.0.1:9/v1" },
      { provider: "ollama", baseUrl: base },
    ]);
    expect(found).toEqual({ provider: "ollama", baseUrl: base, modelId: "llama3.2:3b" });
  });

  it("returns nothing when no server answers", async () => {
    expect(
      await discoverLocalModel([{ provider: "x", baseUrl: "http://127.0.0.1:9/v1" }], 200),
    ).toBeUndefined();
  });
});
