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
/** With the channels' tokens set: `invite create` makes codes only for a channel guppy runs. */
const configured = () =>
  cleanEnv({ GUPPY_HOME: home, TELEGRAM_BOT_TOKEN: "1:test", SLACK_BOT_TOKEN: "xoxb-test" });
/** A pairing code issued to user `id` (as when they wrote to the bot). */
const pairCode = (id: string, name: string): string => {
  const decision = access().check("telegram", { id, name });
  if (decision.kind !== "pair") throw new Error("expected a pairing code");
  return decision.code;
};
const access = () =>
  createAccessControl({
    store: createAccessStore(home),
    settings: () => ({ policy: "pairing", allowedUsers: [] }),
    logger: silentLogger,
  });

describe("guppy pairing / guppy invite", () => {
  it("names the path when an access file is a directory (a thread id once made one there)", async () => {
    mkdirSync(join(home, "access", "telegram", "approved.json"), { recursive: true });
    const r = await runCli(["pairing", "list", "telegram"], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(join(home, "access", "telegram", "approved.json"));
    expect(r.stderr).toContain("is a directory");
  });

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
    expect(ok.stdout).toContain("Approved ann (555) on telegram as guest");
    expect(access().check("telegram", { id: "555" })).toEqual({ kind: "allow", role: "guest" });
  });

  it("creates a one-time invite code stored under GUPPY_HOME/access", async () => {
    const result = await runCli(["invite", "create", "slack"], { env: configured() });
    expect(result.code).toBe(0);
    const code = result.stdout.split("\n")[0] ?? "";
    const invites = JSON.parse(readFileSync(join(home, "access", "slack", "invites.json"), "utf8"));
    expect(invites).toMatchObject([{ code, role: "guest" }]);
    expect(access().redeemInvite("slack", { id: "u1" }, code)).toEqual({
      kind: "allow",
      role: "guest",
    });
  });

  it("rejects an unknown channel or action with a usage line", async () => {
    const bad = await runCli(["invite", "create", "irc"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'guppy: unknown channel "irc": expected one of telegram, slack, discord\n',
    );
    const unknownAction = await runCli(["pairing", "forget", "telegram"], { env: env() });
    expect(unknownAction.code).toBe(2);
    expect(unknownAction.stderr).toBe(
      'guppy: unknown pairing action "forget" (usage: guppy pairing list|approve|role|revoke <channel> ...; see guppy pairing --help)\n',
    );
  });

  it.each([
    ["pairing", "guppy pairing revoke <channel> <user>"],
    ["invite", "guppy invite revoke <channel> <code>"],
  ])("bare guppy %s prints its usage, the lines --help gives", async (command, line) => {
    const bare = await runCli([command], { env: env() });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe("");
    expect(bare.stdout.startsWith("Usage:\n")).toBe(true);
    expect(bare.stdout).toContain(line);
    const help = await runCli([command, "--help"], { env: env() });
    expect(help.stdout).toContain(bare.stdout.trimEnd());
  });

  it("refuses an invite for a channel that is not configured, naming the setting to set", async () => {
    for (const [channel, setting] of [
      ["telegram", "TELEGRAM_BOT_TOKEN"],
      ["slack", "SLACK_BOT_TOKEN"],
      ["discord", "DISCORD_BOT_TOKEN"],
    ]) {
      const r = await runCli(["invite", "create", channel as string], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.split("\n")).toEqual([
        expect.stringMatching(new RegExp(`^guppy: \\w+ is not configured: set ${setting} first`)),
        "",
      ]);
    }
    expect(access().invites("telegram")).toEqual([]);
  });

  it("lists the unused invites with their role, and revokes one so that it admits no one", async () => {
    const empty = await runCli(["invite", "list", "telegram"], { env: env() });
    expect(empty.stdout).toBe("No unused invites on telegram.\n");
    const guest = access().createInvite("telegram");
    const owner = access().createInvite("telegram", "owner");
    const list = await runCli(["invite", "list", "telegram"], { env: env() });
    expect(list.code).toBe(0);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toBe("Unused invites on telegram (code, role, created):");
    expect(lines[1]).toMatch(new RegExp(`^  ${guest}  guest  \\d{4}-`));
    expect(lines[2]).toMatch(new RegExp(`^  ${owner}  owner  \\d{4}-`));

    const revoke = await runCli(["invite", "revoke", "telegram", owner.toLowerCase()], {
      env: env(),
    });
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toBe(`Revoked invite ${owner} on telegram: it admits no one now.\n`);
    expect(access().redeemInvite("telegram", { id: "9" }, owner)).toMatchObject({
      kind: "refuse",
      reason: "invalid-invite",
    });
    const again = await runCli(["invite", "revoke", "telegram", owner], { env: env() });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `guppy: no unused invite on telegram has code ${owner} (see guppy invite list telegram)\n`,
    );
    const missing = await runCli(["invite", "revoke", "telegram"], { env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "guppy: missing <code> (usage: guppy invite revoke <channel> <code>)\n",
    );
    // The other invite still admits.
    expect(access().redeemInvite("telegram", { id: "8" }, guest)).toEqual({
      kind: "allow",
      role: "guest",
    });
  });

  it("revokes an approved user (refused at once, a new code under pairing); an allowlisted one only its setting can", async () => {
    access().approvePairing("telegram", pairCode("1", "ann"), "owner");
    const revoke = await runCli(["pairing", "revoke", "telegram", "1"], { env: env() });
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toBe(
      "Revoked ann (1) on telegram (was owner): their next message is refused (they may ask again: the request comes to you).\n",
    );
    expect(access().admitted("telegram", "1")).toBeUndefined();
    expect(access().check("telegram", { id: "1" }).kind).toBe("pair");
    // No welcome is left to tell them of the approval they lost.
    expect(access().welcomes("telegram")).toEqual([]);

    const unknown = await runCli(["pairing", "revoke", "telegram", "1"], { env: env() });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      "guppy: no admitted user 1 on telegram (see guppy pairing list telegram; user ids, not names)\n",
    );
    const listed = await runCli(["pairing", "revoke", "telegram", "42"], {
      env: cleanEnv({ GUPPY_HOME: home, GUPPY_ALLOWED_USERS: "42" }),
    });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toBe(
      "guppy: 42 is admitted by GUPPY_ALLOWED_USERS: take the id out of it to shut them out\n",
    );
    const open = await runCli(["pairing", "revoke", "telegram", "2"], {
      env: cleanEnv({ GUPPY_HOME: home, GUPPY_ACCESS_POLICY: "open" }),
    });
    expect(open.code).toBe(1);
    access().approvePairing("telegram", pairCode("2", "bo"));
    const openRevoke = await runCli(["pairing", "revoke", "telegram", "2"], {
      env: cleanEnv({ GUPPY_HOME: home, GUPPY_TELEGRAM_ACCESS_POLICY: "open" }),
    });
    expect(openRevoke.stdout).toBe(
      "Revoked bo (2) on telegram (was guest): the channel's policy is open, so they are still answered, as a guest.\n",
    );
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

  it("approves as owner with --owner, and invites with the role they grant", async () => {
    const decision = access().check("telegram", { id: "556", name: "bo" });
    if (decision.kind !== "pair") throw new Error("expected a pairing code");
    const ok = await runCli(["pairing", "approve", "telegram", decision.code, "--owner"], {
      env: env(),
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(
      "Approved bo (556) on telegram as owner.\nguppy serve tells them so on telegram: at once when it is running, else when it next starts.\n",
    );
    expect(access().check("telegram", { id: "556" })).toEqual({ kind: "allow", role: "owner" });

    const invite = await runCli(["invite", "create", "telegram", "--owner"], {
      env: configured(),
    });
    expect(invite.code).toBe(0);
    expect(invite.stdout).toContain("join as owner");
    const code = invite.stdout.split("\n")[0] ?? "";
    expect(access().redeemInvite("telegram", { id: "557" }, code)).toEqual({
      kind: "allow",
      role: "owner",
    });
  });

  it("lists pending requests and admitted users with their roles and how each got in", async () => {
    access().approvePairing("telegram", pairCode("1", "ann"));
    access().createInvite("telegram", "owner");
    const invite = access().createInvite("telegram", "owner");
    access().redeemInvite("telegram", { id: "2", name: "bob" }, invite);
    const pending = pairCode("3", "cy");
    const list = await runCli(["pairing", "list", "telegram"], {
      env: cleanEnv({ GUPPY_HOME: home, GUPPY_ALLOWED_USERS: "42" }),
    });
    expect(list.code).toBe(0);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toBe("Pending pairing requests on telegram (code, user, since):");
    expect(lines[1]).toMatch(new RegExp(`^  ${pending}  3 \\(cy\\)  \\d{4}-`));
    expect(lines.slice(2)).toEqual([
      "Admitted users on telegram (user, role, admitted by):",
      "  1 (ann)  guest  approved pairing",
      "  2 (bob)  owner  invite",
      "  42  owner  GUPPY_ALLOWED_USERS",
      "",
    ]);
  });

  it("changes a role, and says in one line what is wrong with an unknown user or role", async () => {
    access().approvePairing("telegram", pairCode("1", "ann"));
    const allowlisted = cleanEnv({ GUPPY_HOME: home, GUPPY_ALLOWED_USERS: "42" });
    const up = await runCli(["pairing", "role", "telegram", "1", "owner"], { env: env() });
    expect(up.code).toBe(0);
    expect(up.stdout).toBe("ann (1) on telegram is now owner (was guest).\n");
    expect(access().check("telegram", { id: "1" })).toEqual({ kind: "allow", role: "owner" });

    const down = await runCli(["pairing", "role", "telegram", "42", "guest"], { env: allowlisted });
    expect(down.code).toBe(0);
    expect(down.stdout).toBe("42 on telegram is now guest (was owner).\n");
    const approved = JSON.parse(
      readFileSync(join(home, "access", "telegram", "approved.json"), "utf8"),
    );
    expect(approved).toContainEqual(
      expect.objectContaining({ id: "42", via: "allowlist", role: "guest" }),
    );

    const unknownUser = await runCli(["pairing", "role", "telegram", "77", "guest"], {
      env: env(),
    });
    expect(unknownUser.code).toBe(1);
    expect(unknownUser.stderr).toBe(
      "guppy: no admitted user 77 on telegram (see guppy pairing list telegram; user ids, not names)\n",
    );
    const unknownRole = await runCli(["pairing", "role", "telegram", "1", "admin"], { env: env() });
    expect(unknownRole.code).toBe(2);
    expect(unknownRole.stderr).toBe('guppy: unknown role "admin": expected owner or guest\n');
    const missing = await runCli(["pairing", "role", "telegram", "1"], { env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("takes --owner only where it means something, refusing it elsewhere like any unknown flag", async () => {
    const config = await runCli(["config", "--owner"], { env: env() });
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/^guppy: Unknown option '--owner'.*\(see guppy --help\)\n$/);
    const list = await runCli(["pairing", "list", "telegram", "--owner"], { env: env() });
    expect(list.code).toBe(2);
    expect(list.stderr).toBe(
      "guppy: --owner does not apply here (usage: guppy pairing list <channel>)\n",
    );
  });
});
