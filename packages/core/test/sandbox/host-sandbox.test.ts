import { afterEach, describe, expect, it, vi } from "vitest";
import { configuredSecrets } from "../../src/sandbox/host-sandbox.js";
import { loadConfig } from "../../src/settings.js";

const KEY = "sk-test-0123456789abcdef";

describe("configuredSecrets", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("names the secret settings and the provider key variables that are set", () => {
    // pi-ai looks for the provider variables that are set in process.env.
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-env-0123456789");
    const config = loadConfig({
      home: "/nonexistent-guppy-home",
      flags: { apiKey: KEY, model: "anthropic/claude-sonnet-4-5" },
      env: { ANTHROPIC_API_KEY: "sk-ant-env-0123456789" },
    });
    const secrets = configuredSecrets(config, undefined, {
      ANTHROPIC_API_KEY: "sk-ant-env-0123456789",
      GUPPY_HOME: "/home/someone/.guppy",
      PATH: "/usr/bin",
    });
    expect(secrets).toEqual([
      { name: "GUPPY_API_KEY", value: KEY },
      { name: "ANTHROPIC_API_KEY", value: "sk-ant-env-0123456789" },
    ]);
  });
});
