import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  startTelegramEmulator,
  type TelegramEmulator,
} from "../channels/helpers/telegram-emulator.js";
import { until } from "../channels/helpers/until.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe } from "./serve-harness.js";

const ANN = { id: 1001, name: "ann" };
const EVE = { id: 6666, name: "eve" };
const BOB = { id: 7777, name: "bob" };

const pairingCode = (text: string | undefined) =>
  /Pairing code: ([A-Z2-9]{8})/.exec(text ?? "")?.[1];

interface AccessList {
  channel: string;
  policy: string;
  pending: Array<{ user: string; name: string | null; code: string; requested: string }>;
  users: Array<{ user: string; name?: string; role: string; source: string }>;
  invites: Array<{ code: string; role: string; created: string }>;
}

interface ApiError {
  error: { message: string; type: string };
}

/** The access routes (issue 38 item 7) through `guppy serve` with the Telegram emulator. */
describe("GET/POST/DELETE /v1/access/{channel} (guppy serve + telegram-test-api + aimock)", () => {
  let llm: MockLlm;
  let tg: TelegramEmulator | undefined;
  let serve: ServeProcess | undefined;
  let cleanup: (() => void) | undefined;

  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      return { content: `You said: ${requestText({ ...request, messages: last ? [last] : [] })}` };
    });
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    serve?.child.kill("SIGTERM");
    await serve?.exited;
    serve = undefined;
    cleanup?.();
    cleanup = undefined;
    await tg?.stop();
    tg = undefined;
  });

  async function startGateway(): Promise<{ serve: ServeProcess; tg: TelegramEmulator }> {
    tg = await startTelegramEmulator();
    const home = tempHome();
    cleanup = home.cleanup;
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      TELEGRAM_BOT_TOKEN: tg.token,
      GUPPY_TELEGRAM_API_URL: tg.apiUrl,
      GUPPY_ACCESS_POLICY: "pairing",
      GUPPY_ALLOWED_USERS: String(ANN.id),
      GUPPY_SANDBOX: "host",
    });
    return { serve, tg };
  }

  const botSaid = (user: { id: number }, text: string, after = 0) =>
    until(`the bot's message to ${user.id} with "${text}"`, () =>
      tg
        ?.botMessages(user.id)
        .slice(after)
        .find((m) => m.text.includes(text)),
    );

  const list = async (s: ServeProcess, channel = "telegram"): Promise<AccessList> => {
    const r = await s.api(`/v1/access/${channel}`);
    expect(r.status).toBe(200);
    return (await r.json()) as AccessList;
  };
  const post = (s: ServeProcess, path: string, body: unknown) =>
    s.api(`/v1/access/telegram/${path}`, { method: "POST", body: JSON.stringify(body) });

  it("a stranger's request is listed, approved through the API and told; their next message is answered; role and revoke; revoked, they are refused at zero LLM requests", async () => {
    const { serve: s, tg: t } = await startGateway();
    const before = llm.requests().length;

    await t.userSays(EVE, "hello, who are you?");
    const code = pairingCode((await botSaid(EVE, "Pairing code")).text) as string;
    const pending = await list(s);
    expect(pending.channel).toBe("telegram");
    expect(pending.policy).toBe("pairing");
    expect(pending.pending).toEqual([
      { user: String(EVE.id), name: "eve", code, requested: expect.any(String) },
    ]);
    expect(Date.parse(pending.pending[0]?.requested ?? "")).not.toBeNaN();
    // Ann is admitted by GUPPY_ALLOWED_USERS, an owner (admitted before roles: announceOwners).
    expect(pending.users).toEqual([
      { user: String(ANN.id), role: "owner", source: "allowed_users" },
    ]);
    expect(pending.invites).toEqual([]);

    // Codes are compared as the CLI does: any case.
    const approved = await post(s, "approve", { code: code.toLowerCase() });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toEqual({
      status: "approved",
      channel: "telegram",
      user: String(EVE.id),
      name: "eve",
      role: "guest",
    });
    // The running gateway tells her, as after `guppy pairing approve`.
    const told = await botSaid(EVE, "approved");
    expect(told.text).toContain("you can talk to me now");
    const admitted = await list(s);
    expect(admitted.pending).toEqual([]);
    expect(admitted.users).toContainEqual({
      user: String(EVE.id),
      name: "eve",
      role: "guest",
      source: "approved",
    });
    // The same code a second time: no pending request has it now.
    const again = await post(s, "approve", { code });
    expect(again.status).toBe(404);
    expect(((await again.json()) as ApiError).error.message).toBe(
      `no pending pairing request on telegram has code ${code} (codes expire after an hour; see guppy pairing list telegram)`,
    );

    await t.userSays(EVE, "hello again");
    await botSaid(EVE, "You said: hello again");
    expect(llm.requests().length).toBeGreaterThan(before);

    const owner = await post(s, "role", { user: String(EVE.id), role: "owner" });
    expect(owner.status).toBe(200);
    expect(await owner.json()).toEqual({
      status: "changed",
      channel: "telegram",
      user: String(EVE.id),
      role: "owner",
      from: "guest",
    });
    const same = await post(s, "role", { user: String(EVE.id), role: "owner" });
    expect(((await same.json()) as { status: string }).status).toBe("unchanged");
    expect((await list(s)).users).toContainEqual({
      user: String(EVE.id),
      name: "eve",
      role: "owner",
      source: "approved",
    });

    const revoked = await post(s, "revoke", { user: String(EVE.id) });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({
      status: "revoked",
      channel: "telegram",
      user: String(EVE.id),
      role: "owner",
    });
    expect((await list(s)).users.map((u) => u.user)).toEqual([String(ANN.id)]);

    const asked = llm.requests().length;
    const seen = t.botMessages(EVE.id).length;
    await t.userSays(EVE, "are you still there?");
    // Refused like any stranger: a new pairing code, and no request to the model.
    const refused = await botSaid(EVE, "Pairing code", seen);
    expect(pairingCode(refused.text)).not.toBe(code);
    expect(llm.requests().length).toBe(asked);
    expect(t.botMessages(EVE.id).slice(seen)).toHaveLength(1);

    // Unknown users and the allowlisted owner: the CLI's messages.
    const nobody = await post(s, "revoke", { user: "424242" });
    expect(nobody.status).toBe(404);
    expect(((await nobody.json()) as ApiError).error.message).toBe(
      "no admitted user 424242 on telegram (see guppy pairing list telegram; user ids, not names)",
    );
    const nobodyRole = await post(s, "role", { user: "424242", role: "guest" });
    expect(nobodyRole.status).toBe(404);
    const allowlisted = await post(s, "revoke", { user: String(ANN.id) });
    expect(allowlisted.status).toBe(409);
    expect(((await allowlisted.json()) as ApiError).error.message).toBe(
      "1001 is admitted by GUPPY_ALLOWED_USERS: take the id out of it to shut them out",
    );
  }, 60_000);

  it("deny drops a pending request: the stranger is not admitted and their next message asks again", async () => {
    const { serve: s, tg: t } = await startGateway();
    await t.userSays(BOB, "let me in");
    const code = pairingCode((await botSaid(BOB, "Pairing code")).text) as string;
    expect((await list(s)).pending.map((p) => p.code)).toEqual([code]);

    const denied = await post(s, "deny", { code });
    expect(denied.status).toBe(200);
    expect(await denied.json()).toEqual({
      status: "denied",
      channel: "telegram",
      user: String(BOB.id),
      code,
    });
    const after = await list(s);
    expect(after.pending).toEqual([]);
    expect(after.users.map((u) => u.user)).not.toContain(String(BOB.id));
    // Denied twice: nothing has that code now; approving it admits no one.
    expect((await post(s, "deny", { code })).status).toBe(404);
    expect((await post(s, "approve", { code })).status).toBe(404);

    const asked = llm.requests().length;
    const seen = t.botMessages(BOB.id).length;
    await t.userSays(BOB, "please?");
    const next = await botSaid(BOB, "Pairing code", seen);
    expect(pairingCode(next.text)).not.toBe(code);
    expect(llm.requests().length).toBe(asked);
  }, 60_000);

  it("invites are created, listed and revoked; bad fields are 400 naming them; an unknown channel is 404 naming the channels; every route needs the token", async () => {
    const { serve: s } = await startGateway();

    const guest = await s.api("/v1/access/telegram/invites", { method: "POST" });
    expect(guest.status).toBe(201);
    const guestInvite = (await guest.json()) as { code: string; role: string };
    expect(guestInvite).toEqual({ code: expect.stringMatching(/^[A-Z2-9]{10}$/), role: "guest" });
    const owner = await post(s, "invites", { role: "owner" });
    expect(owner.status).toBe(201);
    const ownerInvite = (await owner.json()) as { code: string; role: string };
    expect(ownerInvite.role).toBe("owner");
    expect((await list(s)).invites).toEqual([
      { code: guestInvite.code, role: "guest", created: expect.any(String) },
      { code: ownerInvite.code, role: "owner", created: expect.any(String) },
    ]);

    const removed = await s.api(`/v1/access/telegram/invites/${guestInvite.code}`, {
      method: "DELETE",
    });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({
      status: "revoked",
      channel: "telegram",
      code: guestInvite.code,
    });
    expect((await list(s)).invites.map((i) => i.code)).toEqual([ownerInvite.code]);
    const gone = await s.api(`/v1/access/telegram/invites/${guestInvite.code}`, {
      method: "DELETE",
    });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as ApiError).error.message).toBe(
      `no unused invite on telegram has code ${guestInvite.code} (see guppy invite list telegram)`,
    );

    // Slack has no bot token here: an invite could never be redeemed, as the CLI says.
    const slack = await s.api("/v1/access/slack/invites", { method: "POST" });
    expect(slack.status).toBe(409);
    const slackError = (await slack.json()) as ApiError;
    expect(slackError.error.message).toContain("Slack is not configured: set SLACK_BOT_TOKEN");
    expect((await list(s, "slack")).invites).toEqual([]);

    const unknown = await s.api("/v1/access/irc");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: {
        message: 'unknown channel "irc": expected one of telegram, slack, discord',
        type: "not_found",
      },
    });
    expect((await post(s, "approve", { code: "X" })).status).toBe(404);
    expect((await s.api("/v1/access/http")).status).toBe(404);

    const bad: Array<[string, unknown, string]> = [
      ["approve", {}, "`code`"],
      ["approve", { code: "ABCDEFGH", role: "admin" }, "`role`"],
      ["deny", { code: 12 }, "`code`"],
      ["role", { role: "owner" }, "`user`"],
      ["role", { user: "1001" }, "`role`"],
      ["revoke", { user: "" }, "`user`"],
      ["invites", { role: "root" }, "`role`"],
    ];
    for (const [path, body, field] of bad) {
      const r = await post(s, path, body);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      const error = (await r.json()) as ApiError;
      expect(error.error.type).toBe("invalid_request_error");
      expect(error.error.message).toContain(field);
    }
    const notJson = await s.api("/v1/access/telegram/approve", { method: "POST", body: "code=1" });
    expect(notJson.status).toBe(400);

    // No token, a wrong one, or a cross-site form post (a browser sends no bearer token): 401,
    // and nothing changed.
    const routes: Array<[string, string, string | undefined]> = [
      ["GET", "/v1/access/telegram", undefined],
      ["POST", "/v1/access/telegram/approve", '{"code":"ABCDEFGH"}'],
      ["POST", "/v1/access/telegram/deny", '{"code":"ABCDEFGH"}'],
      ["POST", "/v1/access/telegram/role", '{"user":"1001","role":"guest"}'],
      ["POST", "/v1/access/telegram/revoke", '{"user":"1001"}'],
      ["POST", "/v1/access/telegram/invites", "{}"],
      ["DELETE", `/v1/access/telegram/invites/${ownerInvite.code}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      for (const headers of [
        {},
        { authorization: "Bearer wrong" },
        { "content-type": "text/plain", origin: "https://evil.example", cookie: "a=b" },
      ] as Array<Record<string, string>>) {
        const r = await fetch(`${s.url}${path}`, { method, headers, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(((await r.json()) as ApiError).error.type).toBe("unauthorized");
      }
    }
    const unchanged = await list(s);
    expect(unchanged.invites.map((i) => i.code)).toEqual([ownerInvite.code]);
    expect(unchanged.users).toEqual([
      { user: String(ANN.id), role: "owner", source: "allowed_users" },
    ]);
  }, 60_000);
});
