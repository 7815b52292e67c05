import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { bearerMatches } from "./bearer-token.js";
import { jsonError } from "./json-error.js";
import { readJsonBody } from "./request-body.js";

// The control UI's session: the API token, given once to POST /v1/session, becomes an HttpOnly,
// SameSite=Strict cookie, so the page's script never holds it and the token never rides in a URL.
// The cookie's value is derived from the token (an HMAC), so it survives a restart of the gateway
// and a new token (a new api-token file or GUPPY_API_TOKEN) ends every session.

export const SESSION_COOKIE = "guppy_session";
/** The header the page sends with every call that changes state (see `requestAllowed`). */
export const CSRF_HEADER = "x-guppy-csrf";
const SESSION_DAYS = 30;

/** The cookie's value for `token`. */
export function sessionValue(token: string): string {
  return createHmac("sha256", token).update("guppy control UI session v1").digest("base64url");
}

function sessionMatches(cookie: string | undefined, token: string): boolean {
  if (!cookie) return false;
  const given = Buffer.from(cookie);
  const expected = Buffer.from(sessionValue(token));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export type Authentication =
  | { status: "bearer" }
  | { status: "cookie" }
  | { status: "refused"; reason: "missing" | "cross_site" };

/**
 * Who is asking: a bearer token (scripts, `guppy status`) or the page's session cookie. A call
 * that changes state with the cookie must also carry the `X-Guppy-CSRF` header and, where the
 * browser says where it came from, come from this origin: a form or link on another site can
 * send neither the header (a custom header needs a CORS preflight, which guppy never grants)
 * nor, with SameSite=Strict, the cookie itself.
 */
export function authenticate(c: Context, token: string): Authentication {
  if (bearerMatches(c.req.header("authorization"), token)) return { status: "bearer" };
  if (!sessionMatches(getCookie(c, SESSION_COOKIE), token)) {
    return { status: "refused", reason: "missing" };
  }
  if (SAFE_METHODS.has(c.req.method)) return { status: "cookie" };
  return requestAllowed(c) ? { status: "cookie" } : { status: "refused", reason: "cross_site" };
}

/** A state-changing call from the page itself (see `authenticate`). */
function requestAllowed(c: Context): boolean {
  if (c.req.header(CSRF_HEADER) !== "1") return false;
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return false;
  const origin = c.req.header("origin");
  if (origin !== undefined) {
    const host = c.req.header("host");
    try {
      if (!host || new URL(origin).host !== host) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export function crossSiteRefused(c: Context): Response {
  return jsonError(
    c,
    403,
    `Refused: a call that changes state with the session cookie must come from guppy's own page (the ${CSRF_HEADER} header, same origin).`,
    "csrf",
  );
}

/**
 * A readable marker beside the session cookie, `guppy_signed_in=1`: it holds no secret and opens
 * nothing, it only lets the page show itself at once instead of asking GET /v1/session first.
 */
export const MARKER_COOKIE = "guppy_signed_in";

function setSessionCookie(c: Context, value: string, maxAge: number): void {
  c.header(
    "set-cookie",
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`,
  );
  setMarkerCookie(c, maxAge);
}

function setMarkerCookie(c: Context, maxAge: number): void {
  c.header(
    "set-cookie",
    `${MARKER_COOKIE}=${maxAge > 0 ? "1" : ""}; Path=/; SameSite=Strict; Max-Age=${maxAge}`,
    { append: true },
  );
}

/**
 * The session routes, open without a token: GET /v1/session (signed in? and, to a client on this
 * machine only, where the token is stored), POST /v1/session `{"token": …}` (sign in: sets the
 * cookie), DELETE /v1/session (sign out: clears it).
 */
export function addSessionRoutes(
  app: Hono,
  options: { token: string; tokenHint: string; isLoopback: (c: Context) => boolean },
): void {
  app.get("/v1/session", (c) => {
    c.header("cache-control", "no-store");
    const signedIn = sessionMatches(getCookie(c, SESSION_COOKIE), options.token);
    // A marker left from a session that ended (a new token): cleared, so the page asks again.
    if (!signedIn && getCookie(c, MARKER_COOKIE) !== undefined) setMarkerCookie(c, 0);
    return c.json({
      authenticated: signedIn,
      ...(options.isLoopback(c) ? { token_hint: options.tokenHint } : {}),
    });
  });
  app.post("/v1/session", async (c) => {
    const parsed = await readJsonBody(c);
    if (!parsed.ok) return parsed.response;
    const given = parsed.body.token;
    if (typeof given !== "string" || given.trim() === "") {
      return jsonError(c, 400, "`token` must be a non-empty string.", "invalid_request_error");
    }
    if (!sameToken(given.trim(), options.token)) {
      const hint = options.isLoopback(c) ? ` (${options.tokenHint})` : "";
      return jsonError(c, 401, `That is not guppy's API token${hint}.`, "unauthorized");
    }
    setSessionCookie(c, sessionValue(options.token), SESSION_DAYS * 24 * 3600);
    return c.json({ authenticated: true });
  });
  app.delete("/v1/session", (c) => {
    // Signing out needs no proof: it only clears this browser's cookie.
    setSessionCookie(c, "", 0);
    return c.json({ authenticated: false });
  });
}
