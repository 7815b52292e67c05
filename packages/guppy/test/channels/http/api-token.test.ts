import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isConfigError, loadConfig } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { apiTokenToRedact, resolveApiToken } from "../../../src/channels/http/api-token.js";
import { http } from "../../../src/channels/http/descriptor.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
const newHome = () => {
  const home = mkdtempSync(join(tmpdir(), "guppy-api-token-"));
  homes.push(home);
  return home;
};
const configOf = (home: string, env: Record<string, string> = {}, flags = {}) =>
  loadConfig({ env: { GUPPY_HOME: home, ...env }, flags, settings: http.settings });

/** The one-line ConfigError `resolveApiToken` stops with. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isConfigError(error)).toBe(true);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    return message;
  }
  throw new Error("resolveApiToken took the token");
}

const RULE =
  "an API token is at least 16 characters of visible ASCII (letters, digits, punctuation; no spaces)";

describe("resolveApiToken", () => {
  it.each(["127.0.0.1", "0.0.0.0"])(
    "stops on a token file it cannot use (host %s), naming the file and the rule, and leaves the file alone",
    (host) => {
      const home = newHome();
      const path = join(home, "api-token");
      writeFileSync(path, "mysecret\n");
      const message = refusal(() => resolveApiToken(configOf(home, { GUPPY_HTTP_HOST: host })));
      expect(message).toBe(
        `${path} does not hold a usable API token: it is 8 characters long; ${RULE} (fix the file, or remove it and guppy generates one).`,
      );
      expect(readFileSync(path, "utf8")).toBe("mysecret\n");
    },
  );

  it("applies the same rule to GUPPY_API_TOKEN, --api-token and the apiToken setting, on any host", () => {
    const home = newHome();
    const cases: Array<[Record<string, string>, Record<string, string>, string, string]> = [
      [{ GUPPY_API_TOKEN: "a" }, {}, "GUPPY_API_TOKEN", "it is 1 character long"],
      [
        { GUPPY_API_TOKEN: "tökentökentöken-123" },
        {},
        "GUPPY_API_TOKEN",
        "it holds a space, a control character or a character outside ASCII",
      ],
      [
        { GUPPY_API_TOKEN: "a token with spaces in it" },
        {},
        "GUPPY_API_TOKEN",
        "it holds a space, a control character or a character outside ASCII",
      ],
      [{}, { apiToken: "short" }, "--api-token", "it is 5 characters long"],
    ];
    for (const [env, flags, origin, problem] of cases) {
      for (const host of ["127.0.0.1", "0.0.0.0"]) {
        const config = configOf(home, { ...env, GUPPY_HTTP_HOST: host }, flags);
        expect(refusal(() => resolveApiToken(config))).toBe(
          `${origin} is not a usable API token: ${problem}; ${RULE}.`,
        );
      }
    }
    writeFileSync(join(home, "settings.json"), JSON.stringify({ apiToken: "0123456789" }));
    expect(refusal(() => resolveApiToken(configOf(home)))).toBe(
      `"apiToken" in ${join(home, "settings.json")} is not a usable API token: it is 10 characters long; ${RULE}.`,
    );
    expect(existsSync(join(home, "api-token"))).toBe(false);
  });

  it("takes a usable token from the environment or the file, and generates one only when there is none", () => {
    const home = newHome();
    const fromEnv = resolveApiToken(
      configOf(home, { GUPPY_API_TOKEN: "0123456789abcdef", GUPPY_HTTP_HOST: "0.0.0.0" }),
    );
    expect(fromEnv).toMatchObject({ token: "0123456789abcdef", source: "env" });
    expect(existsSync(join(home, "api-token"))).toBe(false);

    const generated = resolveApiToken(configOf(home));
    const path = join(home, "api-token");
    expect(generated).toMatchObject({ source: "generated", path });
    expect(generated.token).toMatch(/^[\x21-\x7e]{32}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    writeFileSync(path, "  my-own-token-of-24-chars \n");
    expect(resolveApiToken(configOf(home, { GUPPY_HTTP_HOST: "0.0.0.0" }))).toMatchObject({
      token: "my-own-token-of-24-chars",
      source: "file",
      path,
    });
  });
});

describe("apiTokenToRedact", () => {
  it("generates the token a first start would, before the HTTP channel asks for it", () => {
    const home = newHome();
    const token = apiTokenToRedact(configOf(home));
    expect(token).toMatch(/^[\x21-\x7e]{32}$/);
    expect(readFileSync(join(home, "api-token"), "utf8")).toBe(`${token}\n`);
    // The channel's resolve takes the same token and still says it was generated (and where).
    expect(resolveApiToken(configOf(home))).toMatchObject({ token, source: "generated" });
    // A token the user put there instead is the file's.
    writeFileSync(join(home, "api-token"), "another-token-of-24-chars\n");
    expect(apiTokenToRedact(configOf(home))).toBe("another-token-of-24-chars");
    expect(resolveApiToken(configOf(home))).toMatchObject({ source: "file" });
  });

  it("generates nothing where the channel would refuse to start, leaving the error to it", () => {
    const home = newHome();
    expect(apiTokenToRedact(configOf(home, { GUPPY_HTTP_HOST: "0.0.0.0" }))).toBeUndefined();
    expect(existsSync(join(home, "api-token"))).toBe(false);
    expect(apiTokenToRedact(configOf(home, { GUPPY_API_TOKEN: "0123456789abcdef" }))).toBe(
      "0123456789abcdef",
    );
  });
});
