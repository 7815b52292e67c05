import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import type { ServeProcess } from "../serve/serve-harness.js";

// The control UI's end-to-end tests: Debian's Chromium (installed by .ci/run), headless, driven
// by playwright-core; no browser is downloaded.

export const CHROMIUM = process.env.GUPPY_TEST_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Whether these tests can run: Chromium is there. On CI it must be (.ci/run installs it), so
 * there a missing browser fails the tests instead of skipping them.
 */
export const hasChromium = existsSync(CHROMIUM) || process.env.CI === "true";

/** Screenshots for review: test-output/ui/ at the repository's root (not committed). */
export const SCREENSHOT_DIR = fileURLToPath(
  new URL("../../../../test-output/ui/", import.meta.url),
);

/** Chromium started as the machine's probe found it works here: no network beyond loopback. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

export interface PageWatch {
  /** Console errors, page errors and dialogs (an `alert` would be an injection). */
  problems: string[];
  /** Every URL the page asked for: none may leave the gateway's origin. */
  requests: string[];
}

/**
 * A new page (own context: own cookies) of `width` px, recording what must not happen: script
 * errors, dialogs, requests to other origins.
 */
export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number; dark?: boolean } = {},
): Promise<{ page: Page; watch: PageWatch }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1200, height: options.height ?? 800 },
    colorScheme: options.dark ? "dark" : "light",
  });
  const page = await context.newPage();
  const watch: PageWatch = { problems: [], requests: [] };
  page.on("console", (m) => {
    if (m.type() === "error") watch.problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => watch.problems.push(`pageerror: ${e.message}`));
  page.on("dialog", (d) => {
    watch.problems.push(`dialog: ${d.type()} ${d.message()}`);
    void d.dismiss();
  });
  page.on("request", (r) => watch.requests.push(r.url()));
  return { page, watch };
}

/** Opens the gateway's page and signs in with its token; resolves once the shell shows. */
export async function signIn(page: Page, serve: ServeProcess, hash = ""): Promise<void> {
  await page.goto(`${serve.url}/${hash}`);
  await page.getByLabel("API token").fill(serve.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Pages" }).waitFor();
}

/** Saves a full-page screenshot as test-output/ui/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The URLs of `watch` that went anywhere but `origin`. */
export function foreignRequests(watch: PageWatch, origin: string): string[] {
  return watch.requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith("data:"));
}

/**
 * Stops what an e2e test started, each part only if it was started (a failed beforeAll leaves
 * some undefined): the browser, then guppy serve, the peers, the home.
 */
export async function stopAll(parts: {
  browser?: Browser | undefined;
  serve?: ServeProcess | undefined;
  peers?: Array<{ stop(): Promise<void> } | undefined>;
  cleanup?: (() => void) | undefined;
}): Promise<void> {
  await parts.browser?.close();
  const serve = parts.serve;
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
    serve.child.kill("SIGTERM");
    await serve.exited;
  }
  for (const peer of parts.peers ?? []) await peer?.stop();
  parts.cleanup?.();
}
