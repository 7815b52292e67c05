import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import {
  type CheckedTarget,
  checkUrl,
  FetchRefused,
  pinnedLookup,
  type SsrfPolicy,
} from "./ssrf-guard.js";

// One GET of a web page for read_url: every hop through the SSRF guard, redirects followed by
// hand (each is a new URL to check), the body counted as it streams so a chunked body without a
// length is held to the cap too, and one deadline for the whole fetch.

export interface FetchLimits {
  /** The whole fetch, redirects included (read_url: 30 s). */
  timeoutMs: number;
  /** Most bytes of body kept, after decompression (read_url: 5 MB). */
  maxBytes: number;
  /** Most redirects followed (read_url: 5). */
  maxRedirects: number;
}

export interface FetchedPage {
  /** The URL asked for. */
  requested: string;
  /** Where the body came from, after redirects. */
  url: string;
  status: number;
  /** The Content-Type header as sent (may be empty). */
  contentType: string;
  body: Buffer;
  /** The body went past `maxBytes`: `body` is its first `maxBytes` bytes. */
  truncated: boolean;
  /** The Content-Length the server announced, when it did. */
  announcedBytes?: number;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

const headers = {
  "user-agent": "Mozilla/5.0 (compatible; guppy read_url)",
  accept:
    "text/html,application/xhtml+xml,text/plain;q=0.9,text/*;q=0.8,application/json;q=0.8,application/pdf;q=0.8,*/*;q=0.5",
  "accept-encoding": "gzip, deflate, br",
};

/**
 * GETs `url` within `limits` under the SSRF `policy`. Throws FetchRefused (the guard's refusals,
 * too many redirects) or an Error with a one-line reason (timeout, network error).
 */
export async function fetchPage(
  url: string,
  policy: SsrfPolicy,
  limits: FetchLimits,
  /** The run's abort: the connection is closed at once. */
  signal?: AbortSignal,
): Promise<FetchedPage> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new FetchRefused(
      `read_url: "${url}" is not a valid URL (an http or https URL is needed).`,
    );
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop, { once: true });
  if (signal?.aborted) stop();
  const timedOut = () =>
    signal?.aborted
      ? new Error(`read_url was stopped fetching ${current.href}.`)
      : new Error(
          `read_url timed out after ${formatSeconds(limits.timeoutMs)} fetching ${current.href}.`,
        );
  try {
    for (let redirects = 0; ; redirects++) {
      const target = await checkUrl(current, policy);
      if (controller.signal.aborted) throw timedOut();
      const response = await get(target, controller.signal).catch((error: unknown) => {
        if (controller.signal.aborted) throw timedOut();
        throw new Error(`read_url could not fetch ${current.href}: ${describe(error)}.`);
      });
      const location = response.headers.location;
      if (redirectStatuses.has(response.statusCode ?? 0) && location) {
        response.resume();
        if (redirects === limits.maxRedirects) {
          throw new FetchRefused(
            `read_url stopped at ${current.href}: it redirects again after ${limits.maxRedirects} redirects (at most ${limits.maxRedirects} are followed).`,
          );
        }
        try {
          current = new URL(location, current);
        } catch {
          throw new Error(`read_url: ${current.href} redirects to an invalid URL (${location}).`);
        }
        continue;
      }
      const { body, truncated } = await readBody(response, limits.maxBytes).catch(
        (error: unknown) => {
          if (controller.signal.aborted) throw timedOut();
          throw new Error(`read_url could not read ${current.href}: ${describe(error)}.`);
        },
      );
      const length = Number(response.headers["content-length"]);
      return {
        requested: url,
        url: current.href,
        status: response.statusCode ?? 0,
        contentType: response.headers["content-type"] ?? "",
        body,
        truncated,
        ...(Number.isFinite(length) && !response.headers["content-encoding"]
          ? { announcedBytes: length }
          : {}),
      };
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}

/** One GET to the checked target, connecting only to its checked addresses. */
function get(target: CheckedTarget, signal: AbortSignal): Promise<IncomingMessage> {
  const { url } = target;
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        host: target.host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: {
          ...headers,
          ...(url.username || url.password
            ? {
                authorization: `Basic ${Buffer.from(
                  `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
                ).toString("base64")}`,
              }
            : {}),
        },
        lookup: pinnedLookup(target.addresses),
        // A fresh connection per fetch: a pooled socket could have been opened to another address.
        agent: false,
        signal,
      },
      resolve,
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * The response body, decompressed, up to `maxBytes`: counted chunk by chunk as it arrives (a
 * chunked body announces no length), and the connection closed as soon as it goes past.
 */
function readBody(
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let stream: Readable = response;
  if (encoding === "gzip" || encoding === "x-gzip") stream = response.pipe(createGunzip());
  else if (encoding === "deflate") stream = response.pipe(createInflate());
  else if (encoding === "br") stream = response.pipe(createBrotliDecompress());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(chunks, Math.min(size, maxBytes)), truncated });
    };
    stream.on("data", (chunk: Buffer) => {
      if (done) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) {
        finish(true);
        response.destroy();
        if (stream !== response) stream.destroy();
      }
    });
    stream.on("end", () => finish(false));
    stream.on("error", (error) => {
      if (!done) {
        done = true;
        reject(error);
      }
    });
    if (stream !== response) {
      response.on("error", (error) => {
        if (!done) {
          done = true;
          reject(error);
        }
      });
    }
    response.on("aborted", () => {
      if (!done) {
        done = true;
        reject(new Error("the connection closed before the body ended"));
      }
    });
  });
}

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
