import { rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type ResolvedModel, resolveModel } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { guppySettings } from "../../src/channels/registry.js";
import {
  applyEnvFile,
  onLiveKeyChange,
  realEnvironment,
  withLiveKey,
} from "../../src/commands/live-key.js";
import { cleanEnv, tempHome } from "../helpers/run-cli.js";

const A = "sk-live-key-aaaaaaaaaaaa";
const B = "sk-live-key-bbbbbbbbbbbbbb";
const C = "sk-live-key-cccccccccccccccc";

describe("live-key: guppy.env followed by a running process", () => {
  const home = tempHome();
  const envFile = join(home.home, "guppy.env");
  const saved = { ...process.env };
  afterEach(() => {
    applyEnvFile({});
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    rmSync(envFile, { force: true });
    rmSync(join(home.home, "settings.json"), { force: true });
  });

  /** The configuration and model a command would have, the model a custom OpenAI endpoint. */
  const start = async (env: Record<string, string> = {}) => {
    for (const name of Object.keys(process.env)) delete process.env[name];
    Object.assign(process.env, cleanEnv(env));
    const config = loadConfig({
      env: realEnvironment(),
      home: home.home,
      settings: guppySettings,
      flags: { model: "openai/mock-gpt", baseUrl: "http://127.0.0.1:9/v1" },
    });
    applyEnvFile(config.envFile.values);
    return { config, resolved: await resolveModel(config) };
  };
  /** Rewrites guppy.env, its mtime moved on so that even a same-size edit is seen. */
  let tick = 1_700_000_000;
  const write = (text: string) => {
    writeFileSync(envFile, text);
    tick += 10;
    utimesSync(envFile, tick, tick);
  };

  it("puts guppy.env's variables into process.env below the real ones, and takes them out again", () => {
    process.env.REAL_ONE = "from-env";
    delete process.env.GUPPY_HOME;
    applyEnvFile({ REAL_ONE: "from-file", FILE_ONE: "x", BLANK: " ", GUPPY_HOME: "/elsewhere" });
    expect([process.env.REAL_ONE, process.env.FILE_ONE, process.env.BLANK]).toEqual([
      "from-env",
      "x",
      undefined,
    ]);
    expect(process.env.GUPPY_HOME).toBeUndefined();
    expect(realEnvironment().FILE_ONE).toBeUndefined();
    applyEnvFile({ REAL_ONE: "from-file" });
    expect([process.env.REAL_ONE, process.env.FILE_ONE]).toEqual(["from-env", undefined]);
  });

  it("re-reads the file only when it changed, and picks the key as at start", async () => {
    write(`OPENAI_API_KEY=${A}\n`);
    const { config, resolved } = await start();
    expect(resolved.apiKey).toBe(A);
    const live = withLiveKey(resolved, config);
    const seen: string[][] = [];
    onLiveKeyChange(live, (secrets) => seen.push(secrets.map((s) => `${s.name}=${s.value}`)));
    expect(await live.getApiKey?.()).toBe(A);
    expect(seen).toEqual([]);

    write(`OPENAI_API_KEY=${B}\n`);
    expect(await live.getApiKey?.()).toBe(B);
    expect(process.env.OPENAI_API_KEY).toBe(B);
    expect(seen).toEqual([[`OPENAI_API_KEY=${B}`]]);
    // Unchanged: no re-read, no listener call.
    expect(await live.getApiKey?.()).toBe(B);
    expect(seen).toHaveLength(1);

    // GUPPY_API_KEY in the file beats the provider's variable, as at start.
    write(`OPENAI_API_KEY=${B}\nGUPPY_API_KEY=${C}\n`);
    expect(await live.getApiKey?.()).toBe(C);
  });

  it("falls back to settings.json's apiKey when guppy.env drops GUPPY_API_KEY", async () => {
    writeFileSync(join(home.home, "settings.json"), `{ "apiKey": "${A}" }`);
    write(`GUPPY_API_KEY=${B}\n`);
    const { config, resolved } = await start();
    expect([resolved.apiKey, config.sources.apiKey]).toEqual([B, "envFile"]);
    const live = withLiveKey(resolved, config);
    write("# no key here\n");
    expect(await live.getApiKey?.()).toBe(A);
  });

  it("a bad key in the file fails the request saying where, until it is fixed", async () => {
    write(`OPENAI_API_KEY=${A}\n`);
    const { config, resolved } = await start();
    const live = withLiveKey(resolved, config);
    write("GUPPY_API_KEY=two words\n");
    await expect(live.getApiKey?.()).rejects.toThrow(
      `Invalid variable GUPPY_API_KEY in ${envFile} is a string (a secret, not shown)`,
    );
    await expect(live.getApiKey?.()).rejects.toThrow(/GUPPY_API_KEY/);
    write(`GUPPY_API_KEY=${C}\n`);
    expect(await live.getApiKey?.()).toBe(C);
  });

  it("leaves alone a key from the real environment or a flag, and a getApiKey set already", async () => {
    write(`OPENAI_API_KEY=${A}\n`);
    const fromEnv = await start({ GUPPY_API_KEY: B });
    expect(withLiveKey(fromEnv.resolved, fromEnv.config)).toBe(fromEnv.resolved);
    const { config, resolved } = await start();
    const oauth: ResolvedModel = { ...resolved, getApiKey: () => "oauth-token" };
    expect(withLiveKey(oauth, config)).toBe(oauth);
  });
});
