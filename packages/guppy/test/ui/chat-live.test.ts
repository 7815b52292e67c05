import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  waitFor,
} from "../serve/serve-harness.js";
import {
  foreignRequests,
  hasChromium,
  launchBrowser,
  openPage,
  type PageWatch,
  screenshot,
  signIn,
  stopAll,
} from "./ui-harness.js";

const THREAD = "http:api:live-ui";
const HASH = `#/chat/${encodeURIComponent(THREAD)}`;
/** Model text that would run script if it were taken as HTML. */
const INJECTION = "<img src=x onerror=alert(1)>";

/** A promise the test resolves when it wants the mock to answer. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Issue 38 item 2 (the live half): a run streamed into the thread view, the composer's keys. */
describe.skipIf(!hasChromium)(
  "chat: the live run and the composer (Chromium + guppy serve + aimock)",
  () => {
    let llm: AsyncMockLlm;
    let serve: ServeProcess;
    let browser: Browser;
    let page: Page;
    let watch: PageWatch;
    let cleanup: () => void;
    let marks: string;
    /** The gated tool waits for this file. */
    let toolGate: string;
    /** Holds the answer after the tool (or the steer). */
    const answer = gate();
    /** The "hold on" prompts' answers: held until the end (the runs are stopped before). */
    const held = gate();

    /**
     * The scripted model. "gated tool": a little text, then a bash call that prints a line and
     * waits for a file; after the tool (or a steer), an answer held until the test lets it go;
     * "hold on": an answer held until the end; anything else is echoed.
     */
    const script = async (request: ChatCompletionRequest): Promise<FixtureResponse> => {
      const last = request.messages[request.messages.length - 1];
      const text = contentText(last?.content);
      if (last?.role === "tool" || text.includes("steer-note")) {
        await answer.opened;
        return { content: "All done: the tool said hello, and I was steered." };
      }
      if (text.includes("gated tool")) {
        const command = `echo waiting-for-gate; while [ ! -f ${toolGate} ]; do sleep 0.1; done; echo tool-said-hello`;
        return {
          content: `Let me check. ${INJECTION} `,
          toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }],
        };
      }
      if (text.includes("hold on")) {
        await held.opened;
        return { content: "too late" };
      }
      return { content: `echo: ${text}` };
    };

    const composer = () => page.getByRole("textbox", { name: "Message", exact: true });
    const liveRun = () => page.locator(".live-run");
    const threadState = async () =>
      ((await (await serve.api(`/v1/threads/${THREAD}/status`)).json()) as { state: string }).state;
    /** Waits until the thread view's messages (the log, read again after a run) hold `text`. */
    /**
     * Text on the page outside the live part: the thread view's messages (read again after a
     * run), whatever markup the thread view gives them.
     */
    const outsideLive = (text: string) =>
      page.getByText(text).and(page.locator(":not(.live-thread *)"));
    const messageShown = (text: string) => outsideLive(text).first().waitFor({ timeout: 30_000 });

    beforeAll(async () => {
      marks = mkdtempSync(join(tmpdir(), "guppy-chat-live-"));
      toolGate = join(marks, "tool-gate");
      llm = await startAsyncMockLlm(script);
      const home = tempHome();
      cleanup = home.cleanup;
      serve = await startServe(home.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
      browser = await launchBrowser();
      ({ page, watch } = await openPage(browser));
      await signIn(page, serve, HASH);
      await composer().waitFor({ timeout: 20_000 });
    }, 60_000);
    afterAll(async () => {
      answer.open();
      held.open();
      writeFileSync(toolGate ?? join(tmpdir(), "unused"), "");
      await stopAll({ browser, serve, peers: [llm], cleanup });
      if (marks) rmSync(marks, { recursive: true, force: true });
    });

    it("sends the first message of a new thread with Enter and shows its answer", async () => {
      await composer().fill("hello there");
      await composer().press("Enter");
      await messageShown("echo: hello there");
      // Sent: the box is empty again.
      expect(await composer().inputValue()).toBe("");
    }, 60_000);

    it("streams the answer and a tool row, steers while it runs, and keeps the tool in the context", async () => {
      // A second page, on a phone in dark mode, follows the same thread.
      const phone = await openPage(browser, { width: 390, height: 844, dark: true });
      await signIn(phone.page, serve, HASH);
      await phone.page
        .getByRole("textbox", { name: "Message", exact: true })
        .waitFor({ timeout: 20_000 });
      await phone.page.locator(".context-tools").waitFor({ timeout: 20_000 });

      await composer().fill("please run the gated tool");
      await composer().press("Enter");
      // The text streamed before the tool call shows while the run is still under way: the tool
      // waits for a file the test has not written, so no `final` can have come.
      const running = page.locator('.live-run[data-state="running"]');
      await running.waitFor({ timeout: 30_000 });
      await liveRun().filter({ hasText: "Let me check." }).waitFor({ timeout: 30_000 });
      await liveRun().locator('.tool-row[data-tool-state="running"]').waitFor({ timeout: 30_000 });
      const row = liveRun().locator(".tool-row").first();
      expect(await row.locator(".tool-name").textContent()).toBe("bash");
      expect(await row.locator(".tool-args").textContent()).toContain("waiting-for-gate");
      expect(await liveRun().getAttribute("data-state")).toBe("running");
      // The model's markup is text on the page, not an element.
      expect(await liveRun().textContent()).toContain(INJECTION);
      expect(await liveRun().locator("img").count()).toBe(0);
      expect(await outsideLive("Let me check.").count()).toBe(0);
      // While it runs the box steers, and Stop is there.
      expect(await page.getByRole("button", { name: "Steer" }).count()).toBe(1);
      expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(1);
      await screenshot(page, "chat-live-tool-row");

      // The phone page shows the same run.
      await phone.page.locator(".live-run .tool-row").waitFor({ timeout: 30_000 });
      const overflow = await phone.page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(phone.page, "chat-live-phone-dark");
      await phone.page.context().close();

      // Opened, the running row shows its arguments whole.
      await row.locator("summary").click();
      expect(await row.locator(".tool-args-full").textContent()).toContain("tool-said-hello");
      // …and the running tool's last output lines.
      await row
        .locator(".tool-output", { hasText: "waiting-for-gate" })
        .waitFor({ timeout: 30_000 });

      // A steer while it runs.
      const before = llm.requests.length;
      await composer().fill("steer-note: mention the steer");
      await composer().press("Enter");
      await page
        .locator(".live-line.report", { hasText: "Steered: steer-note" })
        .waitFor({ timeout: 30_000 });
      expect(await composer().inputValue()).toBe("");

      // The tool ends: its result shows in the open row; the answer is still held.
      writeFileSync(toolGate, "");
      await row.locator(".tool-result").waitFor({ timeout: 30_000 });
      expect(await row.getAttribute("data-tool-state")).toBe("ok");
      expect(await row.locator(".tool-result").textContent()).toContain("tool-said-hello");
      await screenshot(page, "chat-live-tool-result");
      // The model's next request carries the tool's result and the steer.
      const next = await waitFor(
        () => llm.requests.slice(before).find((r) => r.messages.some((m) => m.role === "tool")),
        30_000,
        "the request after the tool",
      );
      expect(next.messages.map((m) => contentText(m.content)).join("\n")).toContain("steer-note");

      answer.open();
      await messageShown("All done: the tool said hello");
      // The run is in the messages now: its live copy goes, and the box sends again.
      await liveRun().waitFor({ state: "detached", timeout: 30_000 });
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });

      // The tool call stays listed as one of the context's, its result shown when opened.
      const tools = page.locator(".context-tools");
      await tools
        .locator("summary", { hasText: "Tools in context (1)" })
        .waitFor({ timeout: 30_000 });
      await tools.locator("summary").first().click();
      const kept = tools.locator(".tool-row");
      await kept.locator("summary").click();
      expect(await kept.locator(".tool-result").textContent()).toContain("tool-said-hello");
      expect(await tools.locator(".context-tool-prompt").first().textContent()).toContain(
        "please run the gated tool",
      );
    }, 120_000);

    it("stops a held run with Esc (in the box, then elsewhere on the page), then with the Stop button", async () => {
      for (const how of ["Escape", "Escape on the page", "Stop button"] as const) {
        const before = llm.requests.length;
        await composer().fill(`hold on (${how})`);
        await composer().press("Enter");
        await page.getByRole("button", { name: "Stop" }).waitFor({ timeout: 30_000 });
        // The model has the request and holds its answer.
        await waitFor(
          () => (llm.requests.length > before ? true : undefined),
          30_000,
          "the request",
        );
        if (how === "Escape") await composer().press("Escape");
        else if (how === "Escape on the page") {
          await composer().blur();
          await page.keyboard.press("Escape");
        } else await page.getByRole("button", { name: "Stop" }).click();
        await page.locator(".live-line", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
        await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
        expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0);
        // The thread is idle again.
        await waitFor(
          async () => ((await threadState()) === "idle" ? true : undefined),
          30_000,
          "idle",
        );
      }
    }, 120_000);

    it("counts a prompt queued behind the run, which runs once the run is stopped", async () => {
      await composer().fill("hold on (queue)");
      await composer().press("Enter");
      await page.getByRole("button", { name: "Stop" }).waitFor({ timeout: 30_000 });
      // Another client's prompt waits behind the run.
      const queued = await serve.api(`/v1/threads/${THREAD}/messages`, {
        method: "POST",
        body: JSON.stringify({ text: "queued one" }),
      });
      expect(queued.status).toBe(202);
      await page
        .locator(".live-queued", { hasText: "1 prompt queued" })
        .waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Stop" }).click();
      await messageShown("echo: queued one");
      await page.locator(".live-queued").waitFor({ state: "detached", timeout: 30_000 });
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
    }, 60_000);

    it("makes a newline with Shift+Enter, and /new starts the conversation afresh", async () => {
      await composer().fill("line one");
      await composer().press("Shift+Enter");
      await composer().pressSequentially("line two");
      expect(await composer().inputValue()).toBe("line one\nline two");
      await composer().press("Enter");
      await messageShown("echo: line one\nline two");

      // /compact goes to POST …/compact, and its report shows as one line.
      await composer().fill("/compact");
      await composer().press("Enter");
      const report = page.locator(".live-line.report").last();
      await report.waitFor({ timeout: 60_000 });
      expect((await report.textContent())?.trim()).not.toBe("");
      expect(await composer().inputValue()).toBe("");

      await composer().fill("/new");
      await composer().press("Enter");
      await page
        .locator(".live-line.report", { hasText: "New conversation" })
        .waitFor({ timeout: 30_000 });
      await page
        .locator(".context-tools summary", { hasText: "Tools in context (0)" })
        .waitFor({ timeout: 30_000 });
      expect(await composer().inputValue()).toBe("");

      expect(foreignRequests(watch, serve.url)).toEqual([]);
      // The only failed loads: the new thread's 404s before its first message.
      expect(watch.problems.filter((p) => !/404/.test(p))).toEqual([]);
    }, 60_000);

    it("keeps what was typed when a call fails, and says why", async () => {
      // The gateway goes away: the send fails, the text stays, and the page says why.
      serve.child.kill("SIGTERM");
      await serve.exited;
      await composer().fill("a message that cannot go");
      await composer().press("Enter");
      const alert = page.locator(".composer-error[role=alert]");
      await alert.waitFor({ timeout: 30_000 });
      expect((await alert.textContent())?.length).toBeGreaterThan(0);
      expect(await composer().inputValue()).toBe("a message that cannot go");
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
      expect(await page.getByRole("button", { name: "Send" }).isDisabled()).toBe(false);
    }, 60_000);
  },
);
