import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startTelegramEmulator,
  type TelegramEmulator,
} from "../channels/helpers/telegram-emulator.js";
import { until } from "../channels/helpers/until.js";
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

const ANN = { id: 1001, name: "ann" };
const EVE = { id: 6666, name: "eve" };
const BOB = { id: 7777, name: "bob" };

interface AccessList {
  pending: Array<{ user: string; code: string }>;
  users: Array<{ user: string; role: string; source: string }>;
  invites: Array<{ code: string; role: string }>;
}

/**
 * Issue 38 item 3 end to end: a stranger writes to the Telegram bot (emulator), the pending
 * request appears on the open Access page by itself, is approved as guest there, the user is told
 * and their next message answered (aimock); then the role, a revoke, an invite and a denial, each
 * checked against the gateway's own lists.
 */
describe.skipIf(!hasChromium)(
  "control UI access page (Chromium + guppy serve + Telegram emulator + aimock)",
  () => {
    let llm: MockLlm;
    let tg: TelegramEmulator;
    let serve: ServeProcess;
    let browser: Browser;
    let cleanup: () => void;

    beforeAll(async () => {
      llm = await startMockLlm((request) => {
        const last = lastMessage(request);
        return {
          content: `You said: ${requestText({ ...request, messages: last ? [last] : [] })}`,
        };
      });
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
      browser = await launchBrowser();
    }, 60_000);
    afterAll(async () => {
      await stopAll({ browser, serve, peers: [tg, llm], cleanup });
    });

    const list = async (): Promise<AccessList> => {
      const r = await serve.api("/v1/access/telegram");
      expect(r.status).toBe(200);
      return (await r.json()) as AccessList;
    };
    /** Waits until the gateway's lists satisfy `ok`. */
    const listUntil = (what: string, ok: (l: AccessList) => boolean) =>
      waitFor(
        async () => {
          const l = await list();
          return ok(l) ? l : undefined;
        },
        20_000,
        what,
      );
    const botSaid = (user: { id: number }, text: string) =>
      until(
        `the bot's message to ${user.id} with "${text}"`,
        () => tg.botMessages(user.id).find((m) => m.text.includes(text)),
        30_000,
      );
    const section = (page: Page) => page.getByRole("region", { name: /^telegram/ });

    it("approves a stranger's pairing request as guest, then owner, revokes them, and handles invites and a denial", async () => {
      const { page, watch } = await openPage(browser);
      await signIn(page, serve, "#/access");
      const telegram = section(page);
      await telegram.waitFor({ timeout: 20_000 });
      // Only the chat channels: the HTTP API's token is its access.
      expect(await page.getByRole("region", { name: /^http/ }).count()).toBe(0);
      expect(await telegram.textContent()).toContain("policy: pairing");
      // Ann, admitted by GUPPY_ALLOWED_USERS: the setting alone can take her out.
      const annRow = telegram.getByRole("row", { name: /1001/ });
      await annRow.waitFor();
      expect(await annRow.textContent()).toContain("GUPPY_ALLOWED_USERS");
      expect(await annRow.getByRole("button", { name: /Revoke/ }).count()).toBe(0);

      // A stranger writes; the open page shows the request without a reload.
      await tg.userSays(EVE, "hello, who are you?");
      const code = /Pairing code: ([A-Z2-9]{8})/.exec(
        (await botSaid(EVE, "Pairing code")).text,
      )?.[1];
      expect(code).toBeDefined();
      const pendingRow = telegram.getByRole("row", { name: new RegExp(code as string) });
      await pendingRow.waitFor({ timeout: 20_000 });
      expect(await pendingRow.textContent()).toContain("eve (6666)");
      await screenshot(page, "access-pending");

      await pendingRow.getByRole("button", { name: "Approve as guest" }).click();
      await botSaid(EVE, "approved");
      await pendingRow.waitFor({ state: "detached", timeout: 20_000 });
      const eveRow = telegram.getByRole("row", { name: /eve \(6666\)/ });
      await eveRow.waitFor({ timeout: 20_000 });
      const eveRole = eveRow.getByRole("combobox", { name: "Role of eve (6666)" });
      expect(await eveRole.inputValue()).toBe("guest");
      expect((await list()).users).toContainEqual({
        user: String(EVE.id),
        name: "eve",
        role: "guest",
        source: "approved",
      });
      // Admitted: her next message reaches the model and is answered.
      await tg.userSays(EVE, "hello again");
      await botSaid(EVE, "You said: hello again");

      await eveRole.selectOption("owner");
      await listUntil("eve an owner", (l) =>
        l.users.some((u) => u.user === String(EVE.id) && u.role === "owner"),
      );
      // The select follows the gateway's answer (the next load after the change).
      await waitFor(
        async () => ((await eveRole.inputValue()) === "owner" ? true : undefined),
        20_000,
        "the role select to say owner",
      );

      await screenshot(page, "access-admitted");

      // Revoke asks first, its confirm button focused; Escape (or Cancel) leaves her in, the
      // focus back on Revoke.
      const focused = () => page.evaluate("document.activeElement?.textContent?.trim()");
      await eveRow.getByRole("button", { name: "Revoke: eve (6666)" }).click();
      await waitFor(
        async () => ((await focused()) === "Yes, revoke" ? true : undefined),
        10_000,
        "the confirm button focused",
      );
      await page.keyboard.press("Escape");
      await waitFor(
        async () => ((await focused()) === "Revoke" ? true : undefined),
        10_000,
        "Revoke focused again",
      );
      await eveRow.getByRole("button", { name: "Revoke: eve (6666)" }).click();
      await eveRow.getByRole("button", { name: "Cancel" }).click();
      expect((await list()).users.some((u) => u.user === String(EVE.id))).toBe(true);
      await eveRow.getByRole("button", { name: "Revoke: eve (6666)" }).click();
      await eveRow.getByRole("button", { name: "Yes, revoke" }).click();
      await eveRow.waitFor({ state: "detached", timeout: 20_000 });
      await listUntil("eve revoked", (l) => !l.users.some((u) => u.user === String(EVE.id)));

      // An invite: its code shown once created, listed, then revoked.
      await telegram.getByLabel("Role", { exact: true }).selectOption("owner");
      await telegram.getByRole("button", { name: "Create invite" }).click();
      const created = telegram.getByRole("status");
      await created.waitFor({ timeout: 20_000 });
      const invite = (await list()).invites[0];
      expect(invite?.role).toBe("owner");
      expect(await created.textContent()).toContain(`/start ${invite?.code}`);
      const inviteRow = telegram.getByRole("row", { name: new RegExp(invite?.code as string) });
      await inviteRow.waitFor({ timeout: 20_000 });
      expect(await inviteRow.textContent()).toContain("owner");
      await inviteRow.getByRole("button", { name: `Revoke invite ${invite?.code}` }).click();
      await inviteRow.waitFor({ state: "detached", timeout: 20_000 });
      expect((await list()).invites).toEqual([]);

      // Another stranger, denied: gone from the list, not admitted.
      await tg.userSays(BOB, "let me in");
      const bobCode = /Pairing code: ([A-Z2-9]{8})/.exec(
        (await botSaid(BOB, "Pairing code")).text,
      )?.[1];
      const bobRow = telegram.getByRole("row", { name: new RegExp(bobCode as string) });
      await bobRow.waitFor({ timeout: 20_000 });
      await bobRow.getByRole("button", { name: "Deny" }).click();
      await bobRow.waitFor({ state: "detached", timeout: 20_000 });
      const after = await list();
      expect(after.pending).toEqual([]);
      expect(after.users.map((u) => u.user)).toEqual([String(ANN.id)]);
      expect(await telegram.getByRole("alert").count()).toBe(0);
      await screenshot(page, "access");

      expect(foreignRequests(watch, serve.url)).toEqual([]);
      expect(watch.problems).toEqual([]);
      await page.context().close();
    }, 180_000);

    it("asks nothing while the tab is hidden, says a refused action in one line, and fits a 390-px phone screen in dark mode", async () => {
      const { page, watch } = await openPage(browser, { width: 390, height: 844, dark: true });
      await signIn(page, serve, "#/access");
      const telegram = section(page);
      await telegram.waitFor({ timeout: 20_000 });
      await tg.userSays({ id: 8888, name: "cat" }, "hi");
      const pending = telegram.getByRole("row", { name: /cat \(8888\)/ });
      await pending.waitFor({ timeout: 20_000 });
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(page, "access-phone-dark");

      // The tab hidden: the page stops asking (and the row cannot go before the click below).
      await page.evaluate(
        "Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' }); document.dispatchEvent(new Event('visibilitychange')); true",
      );
      const loads = () => watch.requests.filter((u) => u.endsWith("/v1/status")).length;
      await new Promise((r) => setTimeout(r, 500));
      const hiddenAt = loads();
      // Denied elsewhere (the CLI, another tab) meanwhile: the page's approve is refused, said.
      const code = (await list()).pending[0]?.code as string;
      const denied = await serve.api("/v1/access/telegram/deny", {
        method: "POST",
        body: JSON.stringify({ code }),
      });
      expect(denied.status).toBe(200);
      await new Promise((r) => setTimeout(r, 6000));
      expect(loads()).toBe(hiddenAt);
      await pending.getByRole("button", { name: "Approve as owner" }).click();
      const alert = telegram.getByRole("alert");
      await alert.waitFor({ timeout: 20_000 });
      expect(await alert.textContent()).toContain(
        `no pending pairing request on telegram has code ${code}`,
      );
      // The failed action reloaded the lists: the denied request is gone.
      await pending.waitFor({ state: "detached", timeout: 20_000 });
      const afterAction = loads();

      // Shown again: it asks at once.
      await page.evaluate(
        "delete document.visibilityState; document.dispatchEvent(new Event('visibilitychange')); true",
      );
      await waitFor(
        () => (loads() > afterAction ? true : undefined),
        20_000,
        "a load once visible",
      );
      await screenshot(page, "access-phone-dark-refused");
      await page.context().close();
    }, 120_000);
  },
);
