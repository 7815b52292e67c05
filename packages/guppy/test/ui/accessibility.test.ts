import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, waitFor } from "../serve/serve-harness.js";
import { hasChromium, launchBrowser, signIn, stopAll } from "./ui-harness.js";

/** axe-core's browser build, evaluated in the page (the context bypasses the page's CSP for it). */
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The WCAG 2 A/AA rules axe finds broken on the page as it is now. */
async function violations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.evaluate(AXE);
  return page.evaluate(`axe
    .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    .then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    })))`) as Promise<Violation[]>;
}

/**
 * Issue 38 item 8: labels for screen readers, keyboard use, contrast, in light and dark mode —
 * checked by axe-core on every page of the control UI.
 */
describe.skipIf(!hasChromium)("control UI accessibility (axe-core in Chromium)", () => {
  let llm: MockLlm;
  let serve: ServeProcess;
  let browser: Browser;
  let cleanup: () => void;
  const thread = "http:api:a11y";

  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      return {
        content: `You said: **${requestText({ ...request, messages: last ? [last] : [] })}**`,
      };
    });
    const home = tempHome();
    cleanup = home.cleanup;
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      GUPPY_SANDBOX: "host",
    });
    const sent = await serve.api(`/v1/threads/${thread}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "hello there" }),
    });
    expect(sent.status).toBe(202);
    await waitFor(
      async () => {
        const r = await serve.api(`/v1/threads/${thread}/messages`);
        const body = (await r.json()) as { messages?: Array<{ is_bot: boolean }> };
        return body.messages?.some((m) => m.is_bot) ? true : undefined;
      },
      20_000,
      "the answer",
    );
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await stopAll({ browser, serve, peers: [llm], cleanup });
  });

  for (const scheme of ["light", "dark"] as const) {
    it(`finds no serious or critical WCAG A/AA violation on any page (${scheme})`, async () => {
      const context = await browser.newContext({ bypassCSP: true, colorScheme: scheme });
      const page = await context.newPage();
      const found: Record<string, Violation[]> = {};
      const check = async (name: string) => {
        // Let the page settle (its first calls answered) before it is judged.
        await page.waitForLoadState("networkidle");
        const bad = (await violations(page)).filter(
          (v) => v.impact === "serious" || v.impact === "critical",
        );
        if (bad.length > 0) found[name] = bad;
      };
      await page.goto(`${serve.url}/`);
      await page.getByLabel("API token").waitFor();
      await check("sign-in");
      await signIn(page, serve);
      for (const hash of [
        "#/chat",
        `#/chat/${encodeURIComponent(thread)}`,
        "#/access",
        "#/schedules",
        "#/usage",
        "#/status",
      ]) {
        await page.goto(`${serve.url}/${hash}`);
        await page.getByRole("navigation", { name: "Pages" }).waitFor();
        await check(hash);
      }
      await context.close();
      expect(found).toEqual({});
    });
  }
});
