import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "@guppy/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessStore } from "../../src/access/access-store.js";
import { createAccessControl } from "../../src/access/create-access-control.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

let home: string;
let cleanup: () => void;
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const env = () => cleanEnv({ GUPPY_HOME: home });
const access = () =>
  createAccessControl({
    store: createAccessStore(home),
    settings: () => ({ policy: "pairing", allowedUsers: [] }),
    logger: silentLogger,
  });

describe("guppy pairing / guppy invite", () => {
  it("approves a pending pairing code, and says so in one line when the code is unknown", async () => {
    const decision = access().check("telegram", { id: "555", name: "ann" });
    if (decision.kind !== "pair") throw new Error("expected a pairing code");
    const list = await runCli(["pairing", "list", "telegram"], { env: env() });
    expect(list.stdout).toContain(decision.code);

    const wrong = await runCli(["pairing", "approve", "telegram", "ZZZZ"], { env: env() });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim().split("\n")).toHaveLength(1);
    expect(wrong.stderr).toContain("no pending pairing request on telegram has code ZZZZ");

    const ok = await runCli(["pairing", "approve", "telegram", decision.code], { env: env() });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Approved ann (555) on telegram");
    expect(access().check("telegram", { id: "555" })).toEqual({ kind: "allow" });
  });

  it("creates a one-time invite code stored under GUPPY_HOME/access", async () => {
    const result = await runCli(["invite", "create", "slack"], { env: env() });
    expect(result.code).toBe(0);
    const code = result.stdout.split("\n")[0] ?? "";
    const invites = JSON.parse(readFileSync(join(home, "access", "slack", "invites.json"), "utf8"));
    expect(invites).toMatchObject([{ code }]);
    expect(access().redeemInvite("slack", { id: "u1" }, code)).toEqual({ kind: "allow" });
  });

  it("rejects an unknown channel or action with a usage line", async () => {
    const bad = await runCli(["invite", "create", "irc"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'guppy: unknown channel "irc": expected one of telegram, slack, discord\n',
    );
    const noAction = await runCli(["pairing"], { env: env() });
    expect(noAction.code).toBe(2);
    expect(noAction.stderr).toContain("usage: guppy pairing list <channel>");
  });

  it("guppy serve and guppy pairing stop with one line naming a hand-edited file that does not read", async () => {
    const decision = access().check("telegram", { id: "555" });
    if (decision.kind !== "pair") throw new Error("expected a pairing code");
    const dir = join(home, "access", "telegram");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "approved.json");
    writeFileSync(file, '[\n  {"id": "1001", "name": ann}\n]\n');
    const expected = `guppy: ${file}:2:26 is not valid JSON: expected a value (text must be in double quotes).\n`;
    const serve = await runCli(["serve"], {
      env: cleanEnv({
        GUPPY_HOME: home,
        GUPPY_HTTP_PORT: "0",
        GUPPY_MODEL: "openai/mock",
        GUPPY_BASE_URL: "http://127.0.0.1:9/v1",
        GUPPY_API: "openai-completions",
        GUPPY_API_KEY: "unused",
        TELEGRAM_BOT_TOKEN: "1:unused",
        GUPPY_TELEGRAM_API_URL: "http://127.0.0.1:9",
      }),
      timeoutMs: 20_000,
    });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toBe(expected);
    const approve = await runCli(["pairing", "approve", "telegram", decision.code], { env: env() });
    expect(approve.code).toBe(2);
    expect(approve.stderr).toBe(expected);
  });
});
