import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { createFileThreadLog } from "@guppy/core/state";
import { afterAll, describe, expect, it } from "vitest";
import { sessionValue } from "../../../src/channels/http/browser-session.js";
import { CONTROL_UI_CSP, readControlUi } from "../../../src/channels/http/control-ui.js";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";
import type { HttpBackend } from "../../../src/channels/http/http-backend.js";

const TOKEN = "the-api-token-0123456789";
const COOKIE = `guppy_session=${sessionValue(TOKEN)}`;

/** A backend with one thread, `http:api:t`, that records what is sent to it. */
function recordingBackend(sent: string[]): HttpBackend {
  return {
    async send(threadId, message) {
      sent.push(`${threadId} ${message.type}`);
      return message.type === "prompt"
        ? { status: "queued", inboxId: "i1", position: 0, synced: Promise.resolve() }
        : { status: "delivered" };
    },
    command: async () => ({ status: "duplicate" }),
    gatewayStatus: async () => undefined,
    usageReport: async () => undefined,
    ...createEventCalls(undefined),
    access: async () => undefined,
    thread: async (id) => ({ status: id === "http:api:t" ? "known" : "unknown", threadId: id }),
    threadsInMemory: async () => ({ threads: [] }),
    threadIdsOnDisk: async () => [],
    statuses: async () => [],
    log: createFileThreadLog("/nonexistent"),
  };
}

const uiDir = mkdtempSync(join(tmpdir(), "guppy-ui-"));
writeFileSync(join(uiDir, "index.html"), "<!doctype html><title>guppy</title>");
writeFileSync(join(uiDir, "main-ABC.js"), "console.log(1)");
writeFileSync(join(uiDir, "main-ABC.css"), "body{}");
afterAll(() => rmSync(uiDir, { recursive: true, force: true }));

function app(sent: string[] = [], withUi = true) {
  return createHttpApp({
    backend: recordingBackend(sent),
    token: TOKEN,
    tokenHint: "it is stored in /home/x/.guppy/api-token",
    modelName: "m",
    ...(withUi ? { ui: readControlUi(uiDir) } : {}),
  });
}

const post = (path: string, headers: Record<string, string>, body = '{"text":"hi"}') =>
  app().request(path, { method: "POST", headers, body });

describe("the control UI's files", () => {
  it("are served without a token, the page under a strict CSP and never cached stale", async () => {
    const r = await app().request("/");
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("<title>guppy</title>");
    expect(r.headers.get("content-security-policy")).toBe(CONTROL_UI_CSP);
    expect(CONTROL_UI_CSP).toContain("script-src 'self'");
    expect(CONTROL_UI_CSP).toContain("connect-src 'self'");
    expect(CONTROL_UI_CSP).toContain("frame-ancestors 'none'");
    expect(r.headers.get("cache-control")).toBe("no-cache");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("serve hashed assets with a long cache, and nothing outside the built folder", async () => {
    const js = await app().request("/ui/main-ABC.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe("console.log(1)");
    const zipped = await app().request("/ui/main-ABC.js", {
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await zipped.arrayBuffer())).toString()).toBe("console.log(1)");
    expect((await app().request("/ui/main-ABC.css")).headers.get("content-type")).toMatch(
      /^text\/css/,
    );
    for (const path of ["/ui/missing.js", "/ui/..%2Findex.html", "/ui/index.html"]) {
      expect((await app().request(path)).status).toBe(404);
    }
  });

  it("say how to build the page when it was not built", async () => {
    const r = await app([], false).request("/");
    expect(r.status).toBe(404);
    expect(await r.text()).toMatch(/control UI is not built: run `npm run build`/);
  });
});

describe("POST/GET/DELETE /v1/session", () => {
  it("turns the right token into an HttpOnly SameSite=Strict cookie that is not the token", async () => {
    const r = await post(
      "/v1/session",
      { "content-type": "application/json" },
      JSON.stringify({ token: TOKEN }),
    );
    expect(r.status).toBe(200);
    const cookie = r.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^guppy_session=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain(TOKEN);
    expect(cookie.split(";")[0]).toBe(COOKIE);
    // And the page's readable marker, which holds nothing secret.
    expect(cookie).toMatch(/, guppy_signed_in=1; Path=\/; SameSite=Strict; Max-Age=\d+$/);
    expect(
      (await app().request("/v1/threads", { headers: { cookie: "guppy_signed_in=1" } })).status,
    ).toBe(401);
  });

  it("refuses a wrong or missing token with no cookie, naming the field", async () => {
    const wrong = await post("/v1/session", {}, JSON.stringify({ token: "nope" }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toBe(
      "That is not guppy's API token.",
    );
    const missing = await post("/v1/session", {}, "{}");
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("`token` must be a non-empty string");
  });

  it("tells whether the browser is signed in, and names the token file only on loopback", async () => {
    const out = await app().request("/v1/session");
    expect(await out.json()).toEqual({ authenticated: false });
    const inside = await app().request("/v1/session", { headers: { cookie: COOKIE } });
    expect(await inside.json()).toEqual({ authenticated: true });
    // app.request has no socket, so it is not a loopback client: no token_hint.
    expect(inside.headers.get("cache-control")).toBe("no-store");
    // A marker outliving its session (a new token) is cleared.
    const stale = await app().request("/v1/session", {
      headers: { cookie: `guppy_signed_in=1; guppy_session=${sessionValue("old-token")}` },
    });
    expect(await stale.json()).toEqual({ authenticated: false });
    expect(stale.headers.get("set-cookie")).toMatch(/^guppy_signed_in=; .*Max-Age=0/);
  });

  it("signs out by clearing the cookie", async () => {
    const r = await app().request("/v1/session", { method: "DELETE" });
    expect(r.status).toBe(200);
    expect(r.headers.get("set-cookie")).toMatch(
      /^guppy_session=; .*Max-Age=0, guppy_signed_in=; .*Max-Age=0$/,
    );
  });
});

describe("the session cookie on the API", () => {
  it("reads with the cookie alone; a wrong cookie is refused", async () => {
    expect((await app().request("/v1/threads", { headers: { cookie: COOKIE } })).status).toBe(200);
    const wrong = await app().request("/v1/threads", {
      headers: { cookie: `guppy_session=${sessionValue("another-token")}` },
    });
    expect(wrong.status).toBe(401);
  });

  it("changes state only with the CSRF header from the same origin", async () => {
    const sent: string[] = [];
    const call = (headers: Record<string, string>) =>
      app(sent).request("/v1/threads/http:api:t/messages", {
        method: "POST",
        headers: { cookie: COOKIE, host: "127.0.0.1:7420", ...headers },
        body: '{"text":"hi"}',
      });
    // A cross-site form: no header (and a form's content type).
    const form = await call({ "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(403);
    expect(((await form.json()) as { error: { type: string } }).error.type).toBe("csrf");
    // The header, but the browser says the request came from another site or origin.
    expect((await call({ "x-guppy-csrf": "1", "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await call({ "x-guppy-csrf": "1", "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await call({ "x-guppy-csrf": "1", origin: "http://127.0.0.1:9999" })).status).toBe(403);
    expect((await call({ "x-guppy-csrf": "1", origin: "null" })).status).toBe(403);
    expect(sent).toEqual([]);
    // The page itself.
    const own = await call({
      "x-guppy-csrf": "1",
      "sec-fetch-site": "same-origin",
      origin: "http://127.0.0.1:7420",
      "content-type": "application/json",
    });
    expect(own.status).toBe(202);
    expect(sent).toEqual(["http:api:t prompt"]);
  });

  it("leaves bearer-token clients as they were: no CSRF header needed", async () => {
    const sent: string[] = [];
    const r = await app(sent).request("/v1/threads/http:api:t/abort", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(r.status).toBe(200);
    expect(sent).toEqual(["http:api:t abort"]);
  });

  it("ends with a new token: the old cookie no longer opens anything", async () => {
    const rotated = createHttpApp({
      backend: recordingBackend([]),
      token: "a-new-token-9876543210",
      tokenHint: "x",
      modelName: "m",
    });
    expect((await rotated.request("/v1/threads", { headers: { cookie: COOKIE } })).status).toBe(
      401,
    );
  });
});
