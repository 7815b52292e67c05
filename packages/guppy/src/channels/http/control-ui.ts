import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { Hono } from "hono";

// The control UI (packages/guppy/ui, built into dist/ui by scripts/bundle-ui.mjs): served at / on
// the HTTP API's listener. The files hold no secret, so they are served without a token; every
// call the page makes goes to the API and is checked there (browser-session.ts).

/** The built page: index.html and its hashed assets, read once at start. */
export interface ControlUi {
  index: string;
  /** By file name under /ui/. */
  assets: Map<string, Asset>;
}

interface Asset {
  body: Uint8Array;
  /** The same bytes gzipped, made at the first request that takes gzip (not at start). */
  gzip?: Uint8Array;
  type: string;
}

/**
 * What the page may load and talk to: its own origin only (no CDN, no web fonts, no inline
 * script), never framed. Styles set from script (uPlot, Preact's `style` props) go through the
 * CSSOM, which `style-src 'self'` allows.
 */
export const CONTROL_UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/**
 * The built UI beside this file's package (dist/ui), or undefined when it was not built.
 * Looks up from here: dist/bundle/ (bundled), dist/channels/http/ (tsc) or src/channels/http/.
 */
export function loadControlUi(
  from = dirname(fileURLToPath(import.meta.url)),
): ControlUi | undefined {
  let dir = from;
  for (let i = 0; i < 5; i++) {
    const ui = basename(dir) === "dist" ? join(dir, "ui") : join(dir, "dist", "ui");
    if (existsSync(join(ui, "index.html"))) return readControlUi(ui);
    dir = dirname(dir);
  }
  return undefined;
}

export function readControlUi(dir: string): ControlUi {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    if (name === "index.html") continue;
    const type = TYPES[extname(name)];
    if (!type) continue;
    assets.set(name, { body: readFileSync(join(dir, name)), type });
  }
  return { index: readFileSync(join(dir, "index.html"), "utf8"), assets };
}

/** Headers every answer of the page carries. */
function pageHeaders(type: string, cache: string): Record<string, string> {
  return {
    "content-type": type,
    "cache-control": cache,
    "content-security-policy": CONTROL_UI_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
  };
}

/** GET / (the page) and GET /ui/{file} (its assets: hashed names, cached for a year). */
export function addControlUiRoutes(app: Hono, ui: ControlUi | undefined): void {
  app.get("/", (c) => {
    if (!ui) {
      return c.text(
        "The control UI is not built: run `npm run build` in guppy's folder, then restart guppy serve.\n",
        404,
      );
    }
    return c.body(ui.index, 200, pageHeaders("text/html; charset=utf-8", "no-cache"));
  });
  app.get("/ui/:file", (c) => {
    const asset = ui?.assets.get(c.req.param("file"));
    if (!asset) return c.text("Not found.\n", 404);
    const headers = {
      ...pageHeaders(asset.type, "public, max-age=31536000, immutable"),
      vary: "accept-encoding",
    };
    if (/\bgzip\b/.test(c.req.header("accept-encoding") ?? "")) {
      asset.gzip ??= gzipSync(asset.body, { level: 9 });
      return c.body(asset.gzip as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "content-encoding": "gzip",
      });
    }
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, headers);
  });
}
