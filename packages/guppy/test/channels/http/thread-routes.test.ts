import { createFileThreadLog } from "@guppy/core/state";
import { canonicalThreadId } from "@guppy/core/thread-layout";
import { describe, expect, it } from "vitest";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";
import type { HttpBackend } from "../../../src/channels/http/http-backend.js";

const TOKEN = "a-token-of-some-length";

/** A backend that knows `threads` (by canonical id) and logs one message per thread: its id. */
function threadsBackend(threads: string[]): HttpBackend {
  const known = new Set(threads.map(canonicalThreadId));
  const backend: HttpBackend = {
    send: async () => ({ status: "delivered" }),
    command: async () => ({ status: "duplicate" }),
    gatewayStatus: async () => undefined,
    usageReport: async () => undefined,
    ...createEventCalls(undefined),
    access: async () => undefined,
    async thread(id) {
      let threadId: string;
      try {
        threadId = canonicalThreadId(id);
      } catch (error) {
        return { status: "invalid", reason: (error as Error).message };
      }
      return { status: known.has(threadId) ? "known" : "unknown", threadId };
    },
    threadsInMemory: async () => ({ threads: [] }),
    threadIdsOnDisk: async () => [],
    statuses: async () => [],
    log: {
      ...createFileThreadLog("/nonexistent"),
      readAll: async (threadId) => [
        {
          date: "2026-01-01T00:00:00.000Z",
          messageId: "m1",
          userId: "u",
          userName: "u",
          text: threadId,
          isBot: false,
        },
      ],
    },
  };
  return backend;
}

const get = (backend: HttpBackend, path: string) =>
  createHttpApp({ backend, token: TOKEN, tokenHint: "test", modelName: "m" }).request(path, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });

describe("thread ids in the path of /v1/threads/{id}/…", () => {
  it("are URL-decoded once: a thread whose id holds % is reached by its encoded spelling", async () => {
    const backend = threadsBackend(["http:api:50%off", "http:api:a%41", "http:api:aA"]);
    for (const [path, id] of [
      ["http:api:50%25off", "http:api:50%off"],
      ["http:api:a%2541", "http:api:a%41"],
      ["http:api:aA", "http:api:aA"],
    ]) {
      const r = await get(backend, `/v1/threads/${path}/messages`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { thread_id: string; messages: Array<{ text: string }> };
      expect(body.thread_id).toBe(id);
      expect(body.messages[0]?.text).toBe(id);
    }
  });

  it("may spell colons as %3A and other characters URL-encoded (%2F, UTF-8)", async () => {
    const backend = threadsBackend(["http:api:jobs", "http:api:a/b", "http:用户:notes"]);
    for (const [path, id] of [
      ["http%3Aapi%3Ajobs", "http:api:jobs"],
      ["http:api:a%2Fb", "http:api:a/b"],
      [encodeURIComponent("http:用户:notes"), "http:用户:notes"],
    ]) {
      const r = await get(backend, `/v1/threads/${path}/messages`);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { thread_id: string }).thread_id).toBe(id);
    }
  });

  it("answers 404 for a thread it does not know, naming the id as decoded once", async () => {
    const r = await get(threadsBackend([]), "/v1/threads/http:api:a%2541/messages");
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe(
      'Unknown thread "http:api:a%41".',
    );
  });
});

describe("the 401 answer", () => {
  const app = () =>
    createHttpApp({
      backend: threadsBackend([]),
      token: TOKEN,
      tokenHint: "it is stored in /home/owner/.guppy/api-token",
      modelName: "m",
    });
  const from = async (remoteAddress: string) => {
    const r = await app().request("/v1/threads", {}, { incoming: { socket: { remoteAddress } } });
    expect(r.status).toBe(401);
    return ((await r.json()) as { error: { message: string } }).error.message;
  };

  it("names the token file to a loopback client only", async () => {
    for (const local of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      expect(await from(local)).toContain("/home/owner/.guppy/api-token");
    }
    for (const remote of ["192.168.1.20", "::ffff:10.0.0.3", "2001:db8::1"]) {
      const message = await from(remote);
      expect(message).toMatch(/Bearer/);
      expect(message).not.toContain("/home/owner");
    }
  });
});
