import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import {
  describeConfig,
  type LoadConfigOptions,
  resolveHome,
} from "../../src/config/load-config.js";
import { listValue, stringValue, tokenValue, urlValue } from "../../src/config/setting-parsers.js";
import { loadConfig as loadCoreConfig } from "../../src/settings.js";

/** Settings an app adds (guppy's chat channels and HTTP API have these), read like core's. */
const app = {
  apiToken: { env: "GUPPY_API_TOKEN", parse: stringValue, secret: true, description: "token" },
  telegramBotToken: { env: "TELEGRAM_BOT_TOKEN", parse: tokenValue, secret: true, description: "" },
  telegramApiUrl: { env: "GUPPY_TELEGRAM_API_URL", parse: urlValue, description: "" },
  slackBotToken: { env: "SLACK_BOT_TOKEN", parse: tokenValue, secret: true, description: "" },
  discordBotToken: { env: "DISCORD_BOT_TOKEN", parse: tokenValue, secret: true, description: "" },
  allowedUsers: { env: "GUPPY_ALLOWED_USERS", parse: listValue(), default: [], description: "" },
};
const loadConfig = (options: LoadConfigOptions = {}) =>
  loadCoreConfig({ ...options, settings: app });

describe("loadConfig", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-config-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const settings = (text: string) => writeFileSync(join(home, "settings.json"), text);

  it("reads modelCost from settings.json and names a bad price", () => {
    settings('{"modelCost": {"input": 3, "output": 15}}');
    expect(loadConfig({ env: { GUPPY_HOME: home } }).modelCost).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0,
      cacheWrite: 0,
    });
    settings('{"modelCost": {"input": 3, "output": -1}}');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      "modelCost.output must be a number ≥ 0 (dollars per million tokens)",
    );
  });

  it("uses defaults when nothing is set", () => {
    const c = loadConfig({ env: { GUPPY_HOME: home } });
    expect(c.home).toBe(home);
    expect(c.maxToolRounds).toBe(25);
    expect(c.toolResultMaxChars).toBe(10_000);
    expect(c.model).toBeUndefined();
    expect(c.sources.maxToolRounds).toBe("default");
  });

  it("applies flags > environment > settings.json > defaults", () => {
    settings(`{
      // comments are allowed
      "model": "anthropic/claude-sonnet-4-5",
      "maxTokens": 1000,
      "maxToolRounds": 7,
    }`);
    const env = { GUPPY_HOME: home, GUPPY_MAX_TOKENS: "2000", GUPPY_MODEL: "openai/gpt-4o" };
    const c = loadConfig({ env, flags: { model: "openai/gpt-4o-mini" } });
    expect(c.model).toBe("openai/gpt-4o-mini");
    expect(c.sources.model).toBe("flag");
    expect(c.maxTokens).toBe(2000);
    expect(c.sources.maxTokens).toBe("env");
    expect(c.maxToolRounds).toBe(7);
    expect(c.sources.maxToolRounds).toBe("settings");
  });

  describe("<home>/guppy.env", () => {
    const envFile = (text: string) => writeFileSync(join(home, "guppy.env"), text);

    it("sits below the real environment and above settings.json", () => {
      settings('{"model": "anthropic/claude-sonnet-4-5", "maxTokens": 1000, "maxToolRounds": 7}');
      envFile("GUPPY_MODEL=openai/gpt-4o\nGUPPY_MAX_TOKENS=2000\nexport GUPPY_MAX_TOOL_ROUNDS=8\n");
      const env = { GUPPY_HOME: home, GUPPY_MAX_TOKENS: "3000" };
      const c = loadConfig({ env, flags: { maxToolRounds: "9" } });
      // The real environment beats guppy.env; a flag beats both.
      expect(c.maxTokens).toBe(3000);
      expect(c.sources.maxTokens).toBe("env");
      expect(c.maxToolRounds).toBe(9);
      expect(c.sources.maxToolRounds).toBe("flag");
      // guppy.env beats settings.json.
      expect(c.model).toBe("openai/gpt-4o");
      expect(c.sources.model).toBe("envFile");
      expect(c.envFile).toEqual({
        path: join(home, "guppy.env"),
        values: {
          GUPPY_MODEL: "openai/gpt-4o",
          GUPPY_MAX_TOKENS: "2000",
          GUPPY_MAX_TOOL_ROUNDS: "8",
        },
      });
      const row = describeConfig(c).find((r) => r.key === "model");
      expect(row?.source).toBe("envFile");
    });

    it("a blank real variable does not hide guppy.env's, and a blank line of it does not hide settings.json's", () => {
      settings('{"maxToolRounds": 7}');
      envFile("GUPPY_MAX_TOKENS=2000\nGUPPY_MAX_TOOL_ROUNDS=\n");
      const c = loadConfig({ env: { GUPPY_HOME: home, GUPPY_MAX_TOKENS: " " } });
      expect([c.maxTokens, c.sources.maxTokens]).toEqual([2000, "envFile"]);
      expect([c.maxToolRounds, c.sources.maxToolRounds]).toEqual([7, "settings"]);
    });

    it("keeps other variables (provider keys) for the app, and reads no home from it", () => {
      envFile("ANTHROPIC_API_KEY=sk-ant-0123456789\nGUPPY_HOME=/elsewhere\n");
      const c = loadConfig({ env: { GUPPY_HOME: home } });
      expect(c.home).toBe(home);
      expect(c.envFile.values.ANTHROPIC_API_KEY).toBe("sk-ant-0123456789");
      expect(c.warnings).toEqual([
        `GUPPY_HOME in ${join(home, "guppy.env")} is ignored: guppy.env is read from the data directory, so that comes only from --home or GUPPY_HOME in the environment.`,
      ]);
    });

    it("warns about a line that is not KEY=value, naming the file and the line", () => {
      envFile("# keys\nGUPPY_MAX_TOKENS=2000\nnot a setting\n");
      const c = loadConfig({ env: { GUPPY_HOME: home } });
      expect(c.maxTokens).toBe(2000);
      expect(c.warnings).toEqual([
        `${join(home, "guppy.env")} line 3: expected KEY=value, got "not a setting"`,
      ]);
    });

    it("names guppy.env as the origin of a bad value, never showing a secret", () => {
      envFile("GUPPY_MAX_TOKENS=lots\n");
      expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
        new ConfigError(
          `Invalid variable GUPPY_MAX_TOKENS in ${join(home, "guppy.env")} is "lots": expected an integer ≥ 1.`,
        ),
      );
      envFile("TELEGRAM_BOT_TOKEN=12345:abc def ghi\n");
      expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
        /^Invalid variable TELEGRAM_BOT_TOKEN in .*guppy\.env is a string \(a secret, not shown\)/,
      );
    });
  });

  it("--home beats GUPPY_HOME", () => {
    const c = loadConfig({ env: { GUPPY_HOME: "/nonexistent" }, home });
    expect(c.home).toBe(home);
  });

  it("refuses an empty --home instead of using the current directory", () => {
    for (const empty of ["", "  "]) {
      const error = new ConfigError(
        `Invalid command-line option --home is ${JSON.stringify(empty)}: expected a directory path.`,
      );
      expect(() => loadConfig({ env: { GUPPY_HOME: home }, home: empty })).toThrow(error);
      expect(() => resolveHome({ env: {}, home: empty })).toThrow(error);
    }
    expect(loadConfig({ env: { GUPPY_HOME: "/nonexistent" }, home }).homeSource).toBe("flag");
    expect(loadConfig({ env: { GUPPY_HOME: home } }).homeSource).toBe("env");
  });

  it("names the variable, the value and what is allowed for a bad environment value", () => {
    expect(() => loadConfig({ env: { GUPPY_HOME: home, GUPPY_MAX_TOKENS: "lots" } })).toThrow(
      new ConfigError(
        'Invalid environment variable GUPPY_MAX_TOKENS is "lots": expected an integer ≥ 1.',
      ),
    );
    expect(() => loadConfig({ env: { GUPPY_HOME: home, GUPPY_API: "grpc" } })).toThrow(
      /GUPPY_API is "grpc": expected one of openai-completions, anthropic-messages/,
    );
    expect(() => loadConfig({ env: { GUPPY_HOME: home, GUPPY_MODEL: "gpt-4o" } })).toThrow(
      /GUPPY_MODEL is "gpt-4o": expected provider\/model-id/,
    );
    expect(() =>
      loadConfig({ env: { GUPPY_HOME: home, GUPPY_BASE_URL: "localhost:11434" } }),
    ).toThrow(/GUPPY_BASE_URL .* expected an http\(s\) URL/);
  });

  it("reads the heartbeat's settings and says in one line what is wrong with a bad one", () => {
    expect(loadConfig({ env: { GUPPY_HOME: home } })).toMatchObject({ heartbeatSeconds: 1800 });
    expect(
      loadConfig({
        env: {
          GUPPY_HOME: home,
          GUPPY_HEARTBEAT_SECONDS: "0",
          GUPPY_HEARTBEAT_HOURS: "22:00-06:00",
        },
      }),
    ).toMatchObject({ heartbeatSeconds: 0, heartbeatHours: "22:00-06:00" });
    expect(() => loadConfig({ env: { GUPPY_HOME: home, GUPPY_HEARTBEAT_SECONDS: "-5" } })).toThrow(
      /^Invalid environment variable GUPPY_HEARTBEAT_SECONDS is "-5": expected an integer from 0 to 604800\.$/,
    );
    expect(() =>
      loadConfig({ env: { GUPPY_HOME: home, GUPPY_HEARTBEAT_HOURS: "8am-10pm" } }),
    ).toThrow(
      /^Invalid environment variable GUPPY_HEARTBEAT_HOURS is "8am-10pm": expected a local time window HH:MM-HH:MM such as 08:00-22:00\.$/,
    );
  });

  it("names the file and key for a bad settings.json value", () => {
    settings('{"maxToolRounds": 0}');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      `Invalid setting "maxToolRounds" in ${join(home, "settings.json")} is 0: expected an integer from 1 to 1000.`,
    );
  });

  it.each([
    ["apiKey", "98765432109876543", "a number"],
    ["telegramBotToken", '{"token": "123456:AAHsecretsecretsecret"}', "an object"],
    ["discordBotToken", "true", "a boolean"],
    ["slackBotToken", '[{"t": "xoxb-secretsecret"}]', "an array"],
  ])("never shows a secret of the wrong JSON type (%s)", (key, json, kind) => {
    settings(`{"${key}": ${json}}`);
    const error = catchError(() => loadConfig({ env: { GUPPY_HOME: home } }));
    expect(error).toBeInstanceOf(ConfigError);
    const expected =
      key === "apiToken" ? "a non-empty string" : "a token of visible ASCII characters";
    expect(error.message).toContain(
      `Invalid setting "${key}" in ${join(home, "settings.json")} is ${kind} (a secret, not shown): expected ${expected}`,
    );
    for (const piece of ["98765", "123456", "AAH", "xoxb"]) {
      expect(error.message).not.toContain(piece);
    }
  });

  it.each([
    ["DISCORD_BOT_TOKEN", "MTIzNDU2Nzg5.SECRETPART\nSECONDLINE"],
    ["GUPPY_API_KEY", "sk-secret key"],
    ["TELEGRAM_BOT_TOKEN", "123456:AAHsecrét"],
  ])("refuses a key or token no header could carry, without showing it (%s)", (name, value) => {
    const error = catchError(() => loadConfig({ env: { GUPPY_HOME: home, [name]: value } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      `Invalid environment variable ${name} is a string (a secret, not shown): expected a token of visible ASCII characters (no spaces, line breaks or other letters).`,
    );
    // Only the ends are trimmed, as for every setting.
    expect(loadConfig({ env: { GUPPY_HOME: home, [name]: " tok-123 \n" } })).toBeDefined();
  });

  it("never shows a secret given as a flag of the wrong type", () => {
    const error = catchError(() =>
      loadConfig({ env: { GUPPY_HOME: home }, flags: { apiToken: false } }),
    );
    expect(error.message).toBe(
      "Invalid command-line option --api-token is a boolean (a secret, not shown): expected a non-empty string.",
    );
  });

  it("says what the key expects for a JSON object or array value", () => {
    settings('{"model": {"id": "openai/gpt-4o"}}');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      `Invalid setting "model" in ${join(home, "settings.json")} is {"id":"openai/gpt-4o"}: expected provider/model-id, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-4o-mini.`,
    );
    settings('{"maxTokens": [[1]]}');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      /"maxTokens" .* is \[\[1\]\]: expected an integer ≥ 1\.$/,
    );
    // Only a list takes an array: one element is no number, model or switch.
    for (const [key, json] of [
      ["maxToolRounds", "[5]"],
      ["debug", "[true]"],
      ["model", '["openai/gpt-4o"]'],
    ] as const) {
      settings(`{"${key}": ${json}}`);
      expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
        `Invalid setting "${key}" in ${join(home, "settings.json")} is ${json.replace(/ /g, "")}: expected`,
      );
    }
    settings('{"allowedUsers": ["12", 34]}');
    expect(loadConfig({ env: { GUPPY_HOME: home } }).allowedUsers).toEqual(["12", "34"]);
  });

  it("points at the line of invalid JSON", () => {
    settings('{\n  "model": "openai/gpt-4o",\n  oops\n}');
    let message = "";
    try {
      loadConfig({ env: { GUPPY_HOME: home } });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`^${join(home, "settings.json")}:3:\\d+ is not valid JSON`));
    expect(message.split("\n")).toHaveLength(1);
  });

  it.each([
    [
      '{\n  "model": "openai/gpt-4o",\n  "apiKey": sk-proj-SUPERSECRETKEY0123456789\n}\n',
      "sk-proj",
    ],
    ['{"apiKey": "sk-ant-SUPERSECRET-abcdefghijklmnop", "x": abc}', "abc}"],
    ['{\n  // a comment\n  "apiKey": "sk-SUPERSECRET" "model": "x"\n}', '"model"'],
  ])("gives line:column of invalid JSON and none of its text: %j", (text, errorAt) => {
    settings(text);
    const before = text.slice(0, text.indexOf(errorAt)).split("\n");
    const at = `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
    const error = catchError(() => loadConfig({ env: { GUPPY_HOME: home } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(
      new RegExp(`^${join(home, "settings.json")}:${at} is not valid JSON: [^\n]+\\.$`),
    );
    expect(error.message).not.toMatch(/SUPERSECRET|sk-|abc|apiKey/);
  });

  it("reads a settings.json saved with a byte order mark", () => {
    settings('\uFEFF{"model": "openai/gpt-4o-mini",\n "x": }');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      `${join(home, "settings.json")}:2:7 is not valid JSON`,
    );
    settings('\uFEFF{"model": "openai/gpt-4o-mini"}');
    const c = loadConfig({ env: { GUPPY_HOME: home } });
    expect(c.model).toBe("openai/gpt-4o-mini");
    expect(c.sources.model).toBe("settings");
  });

  it("rejects a settings.json that is not an object", () => {
    settings("[1,2]");
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(/must hold a JSON object/);
  });

  it("warns about unknown keys with a suggestion instead of failing", () => {
    settings('{"modle": "openai/gpt-4o"}');
    const c = loadConfig({ env: { GUPPY_HOME: home } });
    expect(c.warnings).toEqual([
      `Unknown key "modle" in ${join(home, "settings.json")} (did you mean "model"?); it is ignored.`,
    ]);
    settings('{"home": "/elsewhere"}');
    expect(loadConfig({ env: { GUPPY_HOME: home } }).warnings).toEqual([
      `"home" in ${join(home, "settings.json")} is ignored: settings.json is read from the data directory, so that comes only from --home or GUPPY_HOME.`,
    ]);
  });

  it("refuses a URL with a user name or password (fetch would), masking it in the error", () => {
    const env = {
      GUPPY_HOME: home,
      GUPPY_BASE_URL: "https://bob:hunter2secretpass@proxy.example/v1",
    };
    const fromEnv = catchError(() => loadConfig({ env }));
    expect(fromEnv).toBeInstanceOf(ConfigError);
    expect(fromEnv.message).toBe(
      'Invalid environment variable GUPPY_BASE_URL is "https://bob:****@proxy.example/v1": expected an http(s) URL without a user name or password (fetch refuses those), such as http://127.0.0.1:11434/v1.',
    );
    expect(() =>
      loadConfig({
        env: {
          GUPPY_HOME: home,
          GUPPY_TELEGRAM_API_URL: "https://tg-token-1234567@bot-api.example",
        },
      }),
    ).toThrow('GUPPY_TELEGRAM_API_URL is "https://****@bot-api.example": expected');
    settings('{"baseUrl": "ftp://bob:hunter2secretpass@proxy.example/v1"}');
    expect(() => loadConfig({ env: { GUPPY_HOME: home } })).toThrow(
      `Invalid setting "baseUrl" in ${join(home, "settings.json")} is "ftp://bob:****@proxy.example/v1": expected an http(s) URL`,
    );
    settings('{"baseUrl": "https://proxy.example/v1"}');
    expect(loadConfig({ env: { GUPPY_HOME: home } }).baseUrl).toBe("https://proxy.example/v1");
  });

  it("reads an app's settings like core's, and refuses one that core has already", () => {
    const c = loadConfig({
      env: { GUPPY_HOME: home, TELEGRAM_BOT_TOKEN: "123456:AAHsecretsecretsecret" },
      flags: { allowedUsers: "7,8" },
    });
    expect(c.telegramBotToken).toBe("123456:AAHsecretsecretsecret");
    expect(c.allowedUsers).toEqual(["7", "8"]);
    expect(c.sources).toMatchObject({ telegramBotToken: "env", allowedUsers: "flag" });
    const row = describeConfig(c).find((r) => r.key === "telegramBotToken");
    expect(row).toEqual({
      key: "telegramBotToken",
      env: "TELEGRAM_BOT_TOKEN",
      value: "123…et (masked)",
      source: "env",
    });
    settings('{"telegramBotTokne": "x"}');
    expect(loadConfig({ env: { GUPPY_HOME: home } }).warnings[0]).toContain(
      '(did you mean "telegramBotToken"?)',
    );
    const twice = { model: { env: "APP_MODEL", parse: stringValue, description: "" } };
    expect(() => loadCoreConfig({ env: { GUPPY_HOME: home }, settings: twice })).toThrow(
      "The setting model (APP_MODEL) is one of core's or the app's already",
    );
  });

  it("masks secrets in the printed configuration", () => {
    const c = loadConfig({
      env: { GUPPY_HOME: home, GUPPY_API_KEY: "sk-abcdefghijklmnopqrstuvwxyz" },
    });
    const row = describeConfig(c).find((r) => r.key === "apiKey");
    expect(row?.value).not.toContain("abcdefghijklmnop");
    expect(row?.value).toContain("masked");
    expect(row?.source).toBe("env");
  });
});

function catchError(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}
