import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, silentLogger } from "@guppy/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessAdmin } from "../../src/access/access-admin.js";
import { createAccessStore } from "../../src/access/access-store.js";
import { createAccessControl } from "../../src/access/create-access-control.js";
import { guppySettings } from "../../src/channels/registry.js";

let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "guppy-access-admin-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** The backend call behind /v1/access/{channel}…, on the configuration `env` gives. */
function admin(env: Record<string, string> = {}) {
  const config = loadConfig({ env: { GUPPY_HOME: home, ...env }, home, settings: guppySettings });
  return createAccessAdmin(config, silentLogger);
}

/** A stranger's pairing request on `channel`, as a chat channel's check makes it. */
function request(channel: string, id: string, name?: string): string {
  const access = createAccessControl({
    store: createAccessStore(home),
    settings: () => ({ policy: "pairing", allowedUsers: [] }),
    logger: silentLogger,
  });
  const decision = access.check(channel, { id, ...(name ? { name } : {}) });
  if (decision.kind !== "pair") throw new Error(`no code: ${decision.kind}`);
  return decision.code;
}

describe("the access routes' backend call (createAccessAdmin)", () => {
  it("lists a channel's requests, users and invites in the routes' shape; expired requests are left out", () => {
    const code = request("slack", "U1", "ann");
    const stale = request("slack", "U2");
    const pendingFile = join(home, "access", "slack", "pending.json");
    const pending = JSON.parse(readFileSync(pendingFile, "utf8")) as Array<{
      code: string;
      createdAt: string;
    }>;
    for (const p of pending) if (p.code === stale) p.createdAt = "2020-01-01T00:00:00.000Z";
    writeFileSync(pendingFile, JSON.stringify(pending));
    const call = admin({ GUPPY_ALLOWED_USERS: "U9", GUPPY_SLACK_ACCESS_POLICY: "allowlist" });
    const answer = call({ action: "list", channel: "Slack" });
    expect(answer).toEqual({
      ok: true,
      status: 200,
      body: {
        channel: "slack",
        policy: "allowlist",
        pending: [{ user: "U1", name: "ann", code, requested: expect.any(String) }],
        users: [{ user: "U9", role: "owner", source: "allowed_users" }],
        invites: [],
      },
    });
    // Another channel's files are its own.
    expect(call({ action: "list", channel: "discord" })).toMatchObject({
      body: { policy: "pairing", pending: [], users: [{ user: "U9" }] },
    });
  });

  it("approve admits as the role asked and leaves the welcome the running gateway tells", () => {
    const code = request("telegram", "42", "bob");
    const call = admin();
    expect(call({ action: "approve", channel: "telegram", body: { code, role: "owner" } })).toEqual(
      {
        ok: true,
        status: 200,
        body: { status: "approved", channel: "telegram", user: "42", name: "bob", role: "owner" },
      },
    );
    const welcome = join(home, "access", "telegram", "welcome", "42.json");
    expect(existsSync(welcome)).toBe(true);
    expect(JSON.parse(readFileSync(welcome, "utf8"))).toMatchObject({
      userId: "42",
      role: "owner",
    });
    expect(call({ action: "list", channel: "telegram" })).toMatchObject({
      body: {
        pending: [],
        users: [{ user: "42", name: "bob", role: "owner", source: "approved" }],
      },
    });
  });

  it("deny drops only the request with that code and admits no one", () => {
    const first = request("telegram", "1");
    const second = request("telegram", "2");
    const call = admin();
    expect(
      call({ action: "deny", channel: "telegram", body: { code: ` ${first.toLowerCase()} ` } }),
    ).toEqual({
      ok: true,
      status: 200,
      body: { status: "denied", channel: "telegram", user: "1", code: first },
    });
    expect(call({ action: "list", channel: "telegram" })).toMatchObject({
      body: { pending: [{ user: "2", code: second }], users: [] },
    });
    expect(call({ action: "deny", channel: "telegram", body: { code: first } })).toMatchObject({
      ok: false,
      status: 404,
      type: "not_found",
    });
  });

  it("invites: refused for a channel without its token, made for one with it, revoked by code", () => {
    expect(admin()({ action: "create-invite", channel: "discord" })).toEqual({
      ok: false,
      status: 409,
      message: expect.stringContaining("Discord is not configured: set DISCORD_BOT_TOKEN"),
      type: "not_configured",
    });
    const call = admin({ DISCORD_BOT_TOKEN: "x" });
    const made = call({ action: "create-invite", channel: "discord", body: { role: "owner" } });
    if (!made.ok) throw new Error(made.message);
    expect(made.status).toBe(201);
    const code = made.body.code as string;
    expect(made.body).toEqual({ code, role: "owner" });
    expect(call({ action: "revoke-invite", channel: "discord", code })).toMatchObject({
      ok: true,
      body: { status: "revoked", code },
    });
    expect(call({ action: "list", channel: "discord" })).toMatchObject({ body: { invites: [] } });
  });

  it("names the bad field, the unknown channel, user or code", () => {
    const call = admin();
    expect(
      call({ action: "role", channel: "telegram", body: { user: "1", role: "admin" } }),
    ).toEqual({
      ok: false,
      status: 400,
      message: '`role`: unknown role "admin": expected owner or guest',
      type: "invalid_request_error",
    });
    expect(call({ action: "approve", channel: "telegram", body: {} })).toMatchObject({
      status: 400,
      message: "`code` must be a non-empty string.",
    });
    expect(call({ action: "list", channel: "matrix" })).toMatchObject({
      status: 404,
      message: 'unknown channel "matrix": expected one of telegram, slack, discord',
    });
    expect(
      call({ action: "role", channel: "telegram", body: { user: "5", role: "guest" } }),
    ).toMatchObject({
      status: 404,
      message: expect.stringContaining("no admitted user 5 on telegram"),
    });
  });
});
