import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startTelegramEmulator,
  type TelegramEmulator,
} from "../channels/helpers/telegram-emulator.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, waitFor } from "../serve/serve-harness.js";
import {
  foreignRequests,
  hasChromium,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
  stopAll,
} from "./ui-harness.js";

interface StatusJson {
  uptime_seconds: number;
  usage: { today: { requests: number } };
  memory: { rss_bytes: number };
  recent_errors: Array<{ message: string }>;
}

/**
 * Issue 38 item 6: the Status page shows GET /v1/status — the model, the Telegram channel
 * running, uptime, RSS in MB and a provider's failure among the recent errors, which appears
 * without a reload (the page refreshes itself).
 */
describe.skipIf(!hasChromium)(
  "control UI status page (Chromium + guppy serve + aimock + Telegram emulator)",
  () => {
    let llm: MockLlm;
    let tg: TelegramEmulator;
    let serve: ServeProcess;
    let browser: Browser;
    let cleanup: () => void;

    beforeAll(async () => {
      llm = await startMockLlm((request) => {
        const last = lastMessage(request);
        const text = requestText({ ...request, messages: last ? [last] : [] });
        if (text.includes("please fail")) {
          return {
            error: { message: "the model broke on purpose", type: "server_error" },
            status: 500,
          };
        }
        return { content: `You said: ${text}` };
      });
      tg = await startTelegramEmulator();
      const home = tempHome();
      cleanup = home.cleanup;
      serve = await startServe(home.home, {
        ...llm.env("openai-completions"),
        GUPPY_MAX_RETRIES: "0",
        TELEGRAM_BOT_TOKEN: tg.token,
        GUPPY_TELEGRAM_API_URL: tg.apiUrl,
        GUPPY_SANDBOX: "host",
      });
      browser = await launchBrowser();
    }, 60_000);
    afterAll(async () => {
      await stopAll({ browser, serve, peers: [tg, llm], cleanup });
    });

    it("shows the model, channels, uptime, RSS and a recent error as it happens", async () => {
      const { page, watch } = await openPage(browser);
      await signIn(page, serve, "#/status");
      const fact = (id: string) => page.locator(`[data-testid="${id}"]`);
      await fact("model").waitFor({ timeout: 20_000 });
      expect(await fact("model").textContent()).toContain("openai/mock-gpt");

      const status = (await (await serve.api("/v1/status")).json()) as StatusJson;
      expect(await fact("uptime").textContent()).toMatch(/\d+ (s|min)/);
      const rss = /([\d.]+) MB/.exec((await fact("memory").textContent()) ?? "");
      expect(rss).not.toBeNull();
      // The page's figure is the API's, to within what the process grew between the two reads.
      expect(Number(rss?.[1])).toBeGreaterThan(20);
      expect(Math.abs(Number(rss?.[1]) * 1e6 - status.memory.rss_bytes)).toBeLessThan(200e6);
      expect(await fact("threads").textContent()).toContain("0 running, 0 queued");

      const telegram = page.locator(".status-channels li", { hasText: "telegram" });
      expect(await telegram.textContent()).toMatch(/telegram\s*running/);
      expect(await page.locator(".status-channels li", { hasText: "slack" }).textContent()).toMatch(
        /slack\s*off/,
      );
      expect(
        await page.getByText("No warnings or errors logged since the gateway started.").count(),
      ).toBe(1);

      // A turn answered: today's requests on the page are the ledger's (GET /v1/status's).
      const hello = await serve.api("/v1/threads/http:api:status-ok/messages", {
        method: "POST",
        body: JSON.stringify({ text: "hello", user: "tester" }),
      });
      expect(hello.status).toBe(202);
      const today = await waitFor(
        async () => {
          const s = (await (await serve.api("/v1/status")).json()) as StatusJson;
          return s.usage.today.requests > 0 ? s.usage.today.requests : undefined;
        },
        30_000,
        "the turn in the ledger",
      );
      const requests = page.getByRole("row", { name: /^Requests/ }).locator("td");
      await waitFor(
        async () => {
          const cells = (await requests.allTextContents()).map((t) => t.trim());
          return cells.join(" ") === `${today} ${today}` ? true : undefined;
        },
        20_000,
        "today's and the month's requests on the page",
      );

      // A provider's 500 on a turn: logged as the run's error, on the page within a refresh.
      const sent = await serve.api("/v1/threads/http:api:status-ui/messages", {
        method: "POST",
        body: JSON.stringify({ text: "please fail", user: "tester" }),
      });
      expect(sent.status).toBe(202);
      await waitFor(
        async () => {
          const s = (await (await serve.api("/v1/status")).json()) as StatusJson;
          return s.recent_errors.some((e) => e.message.includes("the model broke")) || undefined;
        },
        30_000,
        "the error in GET /v1/status",
      );
      const error = page.locator(".status-errors li", { hasText: "the model broke on purpose" });
      await error.waitFor({ timeout: 20_000 });
      expect(await error.textContent()).toContain("http:api:status-ui");
      await screenshot(page, "status");

      expect(foreignRequests(watch, serve.url)).toEqual([]);
      expect(watch.problems).toEqual([]);
      await page.context().close();
    }, 120_000);

    it("fits a 390-px phone screen in dark mode", async () => {
      const { page, watch } = await openPage(browser, { width: 390, height: 844, dark: true });
      await signIn(page, serve, "#/status");
      await page.locator('[data-testid="memory"]').waitFor({ timeout: 20_000 });
      await page.locator(".status-errors li").first().waitFor({ timeout: 20_000 });
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      expect(overflow).toBeLessThanOrEqual(0);
      const pageOverflow = await page.evaluate(
        "(() => { const p = document.getElementById('page'); return p.scrollWidth - p.clientWidth; })()",
      );
      expect(pageOverflow).toBeLessThanOrEqual(0);
      await screenshot(page, "status-phone-dark");
      expect(watch.problems).toEqual([]);
      await page.context().close();
    }, 60_000);
  },
);
