import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/** The event JSON the routes answer (docs/channels.md). */
interface EventJson {
  id: string;
  type: string;
  target: { thread?: string; adapter?: string; channel?: string };
  text: string;
  schedule: string | null;
  timezone?: string;
  next_run: string | null;
}

interface ErrorJson {
  error: { message: string; type: string };
}

describe("GET/POST/PATCH/DELETE /v1/events through guppy serve", () => {
  let llm: AsyncMockLlm;
  let serve: ServeProcess;
  const h = tempHome();
  const eventsDir = join(h.home, "events");
  const eventFile = (id: string) => join(eventsDir, `${id}.json`);

  beforeAll(async () => {
    llm = await startAsyncMockLlm((request): FixtureResponse => {
      const last = request.messages[request.messages.length - 1];
      return { content: `ack: ${contentText(last?.content)}` };
    });
    mkdirSync(eventsDir, { recursive: true });
    serve = await startServe(h.home, {
      ...llm.env(),
      GUPPY_SANDBOX: "host",
      GUPPY_TIMEZONE: "UTC",
    });
  }, 30_000);
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill("SIGTERM");
      await serve.exited;
    }
    await llm?.stop();
    h.cleanup();
  });

  const post = (body: unknown) =>
    serve.api("/v1/events", { method: "POST", body: JSON.stringify(body) });
  const patch = (id: string, body: unknown) =>
    serve.api(`/v1/events/${encodeURIComponent(id)}`, {
      method: "PATCH",
      body: JSON.stringify(body),
    });
  const del = (id: string) =>
    serve.api(`/v1/events/${encodeURIComponent(id)}`, { method: "DELETE" });
  const list = async () => {
    const r = await serve.api("/v1/events");
    expect(r.status).toBe(200);
    return ((await r.json()) as { events: EventJson[] }).events;
  };
  const errorOf = async (r: Response) => ((await r.json()) as ErrorJson).error;

  it("refuses every events route without the bearer token", async () => {
    const routes: Array<[string, string]> = [
      ["GET", "/v1/events"],
      ["POST", "/v1/events"],
      ["PATCH", "/v1/events/x"],
      ["DELETE", "/v1/events/x"],
    ];
    for (const [method, path] of routes) {
      const r = await fetch(`${serve.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(method === "POST" || method === "PATCH"
          ? { body: JSON.stringify({ type: "immediate", thread: "http:api:x", text: "no" }) }
          : {}),
      });
      expect(r.status, `${method} ${path}`).toBe(401);
      expect((await errorOf(r)).type).toBe("unauthorized");
    }
    expect(existsSync(eventFile("x"))).toBe(false);
    expect(llm.requests).toHaveLength(0);
  });

  it("a POSTed immediate event fires into its thread, answered there", async () => {
    const r = await post({ type: "immediate", thread: "http:api:evt", text: "post-imm-marker" });
    expect(r.status).toBe(201);
    const event = (await r.json()) as EventJson;
    expect(event).toMatchObject({
      type: "immediate",
      target: { thread: "http:api:evt" },
      text: "post-imm-marker",
      schedule: null,
    });
    expect(event.id).toMatch(/^immediate-[a-z0-9]{6}$/);
    const messages = await waitFor(
      async () => {
        const m = await threadMessages(serve, "http:api:evt");
        return m.some((x) => x.is_bot && x.text.includes("ack:")) ? m : undefined;
      },
      20_000,
      "the event's answer in its thread",
    );
    const answer = messages.find((x) => x.is_bot);
    expect(answer?.text).toContain(`[scheduled event "${event.id}"] post-imm-marker`);
    // Fired once, then its file is gone (as for a file the CLI writes).
    await waitFor(
      () => (existsSync(eventFile(event.id)) ? undefined : true),
      10_000,
      "the fired file's removal",
    );
  }, 40_000);

  it("creates, lists, edits and deletes a periodic event in <home>/events", async () => {
    const created = await post({
      id: "standup",
      type: "periodic",
      text: "standup notes",
      schedule: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      thread: "http:api:team",
    });
    expect(created.status).toBe(201);
    const event = (await created.json()) as EventJson;
    expect(event).toEqual({
      id: "standup",
      type: "periodic",
      target: { thread: "http:api:team" },
      text: "standup notes",
      schedule: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      next_run: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/),
    });
    const next = new Date(event.next_run as string);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    // 09:00 in Berlin is 07:00 or 08:00 UTC, on a weekday.
    expect([7, 8]).toContain(next.getUTCHours());
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
    expect(JSON.parse(readFileSync(eventFile("standup"), "utf8"))).toEqual({
      type: "periodic",
      text: "standup notes",
      threadId: "http:api:team",
      schedule: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
    });
    expect(await list()).toContainEqual(event);

    // The CLI sees the same event.
    const cli = await runCli(["events", "list"], { env: { GUPPY_HOME: h.home } });
    expect(cli.stdout).toMatch(/standup\s+periodic\s+http:api:team\s+0 9 \* \* 1-5/);

    const again = await post({ id: "standup", type: "immediate", thread: "http:api:x", text: "t" });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).message).toContain(
      '"id" "standup": an event with that id exists',
    );

    const edited = await patch("standup", {
      text: "retro notes",
      schedule: "30 16 * * 5",
      timezone: null,
      adapter: "telegram",
      channel: "42",
    });
    expect(edited.status).toBe(200);
    const after = (await edited.json()) as EventJson;
    expect(after).toMatchObject({
      id: "standup",
      text: "retro notes",
      schedule: "30 16 * * 5",
      target: { adapter: "telegram", channel: "42" },
    });
    expect(after.timezone).toBeUndefined();
    // GUPPY_TIMEZONE=UTC: Friday 16:30 UTC.
    const friday = new Date(after.next_run as string);
    expect([friday.getUTCDay(), friday.getUTCHours(), friday.getUTCMinutes()]).toEqual([5, 16, 30]);
    expect(JSON.parse(readFileSync(eventFile("standup"), "utf8"))).toEqual({
      type: "periodic",
      text: "retro notes",
      adapterId: "telegram",
      channelId: "42",
      schedule: "30 16 * * 5",
    });

    const bad = await patch("standup", { schedule: "every friday" });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain('"schedule" "every friday"');
    expect(JSON.parse(readFileSync(eventFile("standup"), "utf8")).schedule).toBe("30 16 * * 5");

    const deleted = await del("standup");
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ status: "deleted", id: "standup" });
    expect(existsSync(eventFile("standup"))).toBe(false);
    expect((await list()).map((e) => e.id)).not.toContain("standup");
  }, 40_000);

  it("a PATCH moving a one-shot from 2099 to now+2 s makes the running gateway fire it then", async () => {
    const created = await post({
      id: "moved",
      type: "one-shot",
      thread: "http:api:moved",
      text: "moved-marker",
      schedule: "2099-01-01T00:00:00Z",
    });
    expect(created.status).toBe(201);
    // The watcher (100 ms quiet time) loads the 2099 version first: the PATCH is an edit to it.
    await new Promise((r) => setTimeout(r, 1000));
    const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const edited = await patch("moved", {
      schedule: new Date(at).toISOString().replace(".000Z", "Z"),
    });
    expect(edited.status).toBe(200);
    expect(((await edited.json()) as EventJson).next_run).toBe(new Date(at).toISOString());
    const messages = await waitFor(
      async () => {
        const m = await threadMessages(serve, "http:api:moved");
        return m.some((x) => x.is_bot) ? m : undefined;
      },
      20_000,
      "the moved event's answer",
    );
    expect(messages.find((x) => x.is_bot)?.text).toContain(
      '[scheduled event "moved"] moved-marker',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    await waitFor(
      () => (existsSync(eventFile("moved")) ? undefined : true),
      10_000,
      "the fired one-shot's removal",
    );
  }, 40_000);

  it("answers 400 naming the bad field, as guppy events add does, and writes nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ type: "weekly", thread: "http:api:x", text: "t" }, '"type" must be immediate'],
      [{ type: "periodic", thread: "http:api:x", text: "t" }, '"schedule" is missing'],
      [
        { type: "one-shot", thread: "http:api:x", text: "t", schedule: "tomorrow" },
        '"schedule" "tomorrow" is not an ISO 8601 time',
      ],
      [
        { type: "immediate", thread: "http:api:x", text: "t", timezone: "Mars/Olympus" },
        '"timezone" "Mars/Olympus" is not an IANA time zone',
      ],
      [{ type: "immediate", thread: "http:api:x", text: "  " }, '"text" is missing or empty'],
      [
        { type: "immediate", thread: "http:api:x", adapter: "telegram", channel: "1", text: "t" },
        'give "thread", or "adapter" and "channel", not both',
      ],
      [
        { type: "immediate", text: "t" },
        'a target is missing: "thread", or "adapter" and "channel"',
      ],
      [{ type: "immediate", thread: "http:api:x", text: "t", when: "now" }, 'unknown field "when"'],
      [{ type: "immediate", thread: "http:api:x", text: 5 }, '"text" must be a string'],
      [{ id: "../up", type: "immediate", thread: "http:api:x", text: "t" }, '"id" "../up"'],
    ];
    for (const [body, message] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const error = await errorOf(r);
      expect(error.type).toBe("invalid_request_error");
      expect(error.message, JSON.stringify(body)).toContain(message);
    }
    const notJson = await serve.api("/v1/events", { method: "POST", body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(await list()).toEqual([]);
  });

  it("404 for an unknown event on PATCH and DELETE; a file written by hand is listed and editable", async () => {
    expect((await patch("nope", { text: "x" })).status).toBe(404);
    const gone = await del("nope");
    expect(gone.status).toBe(404);
    expect(await errorOf(gone)).toEqual({ message: 'Unknown event "nope".', type: "not_found" });
    expect((await del("..")).status).toBe(404);

    writeFileSync(
      eventFile("later"),
      JSON.stringify({
        type: "one-shot",
        adapterId: "telegram",
        channelId: "7",
        text: "later",
        schedule: "2099-01-02T03:04:00Z",
      }),
    );
    const listed = await list();
    expect(listed).toContainEqual({
      id: "later",
      type: "one-shot",
      target: { adapter: "telegram", channel: "7" },
      text: "later",
      schedule: "2099-01-02T03:04:00Z",
      next_run: "2099-01-02T03:04:00.000Z",
    });
    const renamed = await patch("later", { id: "other" });
    expect(renamed.status).toBe(400);
    expect((await errorOf(renamed)).message).toContain('"id" cannot change');
    const toImmediate = await patch("later", { type: "periodic" });
    expect(toImmediate.status).toBe(400);
    expect((await errorOf(toImmediate)).message).toContain('"schedule" "2099-01-02T03:04:00Z"');
    expect((await del("later")).status).toBe(200);
  });
});
