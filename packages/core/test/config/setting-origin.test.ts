import { describe, expect, it } from "vitest";
import { settingWithValue } from "../../src/config/setting-origin.js";
import { modelSettings } from "../../src/model/model-settings.js";

describe("settingWithValue", () => {
  const origins = (source: "flag" | "env" | "envFile" | "settings") => ({
    sources: { baseUrl: source, apiKey: source },
    settingsPath: "/h/settings.json",
    settings: modelSettings,
  });

  it.each([
    ["flag", "--base-url=http://bob:****@h/v1"],
    ["env", "GUPPY_BASE_URL=http://bob:****@h/v1"],
    ["settings", '"baseUrl": "http://bob:****@h/v1" in /h/settings.json'],
    ["envFile", "GUPPY_BASE_URL=http://bob:****@h/v1 in /h/guppy.env"],
  ] as const)("names a %s value by its place, a URL's password masked", (source, named) => {
    expect(settingWithValue("baseUrl", "http://bob:pw123456@h/v1", origins(source))).toBe(named);
  });

  it.each(["flag", "env", "envFile", "settings"] as const)(
    "never shows a secret (%s)",
    (source) => {
      expect(settingWithValue("apiKey", "sk-123456789", origins(source))).not.toContain("sk-");
    },
  );
});
