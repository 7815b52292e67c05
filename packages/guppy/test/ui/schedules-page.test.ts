import type { FixtureResponse } from "@copilotkit/aimock";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
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

/** The event JSON of GET /v1/events (docs/channels.md). */
interface EventJson {
  id: string;
  type: string;
  target: { thread?: string };
  text: string;
  schedule: string | null;
  timezone?: string;
  next_run: string | null;
}

/** A zone whose offset (+05:30, no daylight saving) differs from the gateway's (UTC) by minutes too. */
const BROWSER_ZONE = "Asia/Kolkata";
const BROWSER_OFFSET_MS = 5.5 * 3_600_000;

/** Issue 38 item 4: the Schedules page creates, lists, edits and cancels events; one fires. */
describe.skipIf(!hasChromium)("Schedules page (Chromium + guppy serve + aimock)", () => {
  let llm: AsyncMockLlm;
  let serve: ServeProcess;
  let browser: Browser;
  let cleanup: () => void;
  const thread = "http:api:sched";

  const listEvents = async () => {
    const r = await serve.api("/v1/events");
    expect(r.status).toBe(200);
    return ((await r.json()) as { events: EventJson[] }).events;
  };
  const answered = (threadId: string, marker: string) =>
    waitFor(
      async () => {
        const m = await threadMessages(serve, threadId);
        return m.find((x) => x.is_bot && x.text.includes(marker));
      },
      60_000,
      `the answer to ${marker} in ${threadId}`,
    );

  /** A page whose browser lives in BROWSER_ZONE (openPage's watch, by hand: it takes no zone). */
  async function openZonedPage(): Promise<{ page: Page; watch: PageWatch }> {
    const context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      colorScheme: "light",
      timezoneId: BROWSER_ZONE,
      locale: "en-US",
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

  beforeAll(async () => {
    llm = await startAsyncMockLlm((request): FixtureResponse => {
      const last = request.messages[request.messages.length - 1];
      return { content: `ack: ${contentText(last?.content)}` };
    });
    const home = tempHome();
    cleanup = home.cleanup;
    serve = await startServe(home.home, {
      ...llm.env(),
      GUPPY_SANDBOX: "host",
      // The gateway reads a zone-less time as UTC: a page that sent the browser's local time
      // without its offset would schedule 5.5 hours off, and the test would see it.
      GUPPY_TIMEZONE: "UTC",
    });
    // The thread exists (it is offered in the form's select) before the page opens.
    const sent = await serve.api(`/v1/threads/${encodeURIComponent(thread)}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "hello-marker" }),
    });
    expect(sent.status).toBe(202);
    await answered(thread, "hello-marker");
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await stopAll({ browser, serve, peers: [llm], cleanup });
  });

  it("a one-shot created at a local date-time is listed with its next run and fires into the thread", async () => {
    const { page, watch } = await openZonedPage();
    await signIn(page, serve, "#/schedules");
    const form = page.getByRole("form", { name: "New event" });
    await form.waitFor({ timeout: 20_000 });
    // Chromium may name the zone by its older alias (Asia/Calcutta): the offset is the point.
    expect(await form.textContent()).toContain("(UTC+05:30)");

    await form.getByLabel("Thread", { exact: true }).selectOption(thread);
    // Far enough ahead for the page to list it first on a loaded machine; whole seconds.
    const at = Math.ceil((Date.now() + 20_000) / 1000) * 1000;
    const local = new Date(at + BROWSER_OFFSET_MS).toISOString().slice(0, 19);
    await form.getByLabel("Run at").fill(local);
    await form.getByLabel("Text").fill("oneshot-marker");
    await form.getByRole("button", { name: "Schedule" }).click();

    const row = page.locator("tr[data-event-id]", { hasText: "oneshot-marker" });
    await row.waitFor({ timeout: 20_000 });
    // The gateway got the browser's local time with its offset: the instant chosen.
    const [event] = (await listEvents()).filter((e) => e.text === "oneshot-marker");
    expect(event).toMatchObject({ type: "one-shot", target: { thread } });
    expect(Date.parse(event?.schedule as string)).toBe(at);
    expect(event?.schedule).toMatch(/\+05:30$/);
    expect(event?.next_run).toBe(new Date(at).toISOString());
    // Listed with its next run in the browser's local time, the ISO time in the title.
    const time = row.locator("time");
    expect(await time.getAttribute("title")).toBe(new Date(at).toISOString());
    const shown = (await time.textContent())?.replace(/\s/g, " ");
    const expected = new Date(at)
      .toLocaleTimeString("en-US", { timeZone: BROWSER_ZONE, timeStyle: "medium" })
      .replace(/\s/g, " ");
    expect(shown).toContain(expected);
    expect(await row.locator("td").first().textContent()).toContain(thread);
    expect(await row.locator(`a[href="#/chat/${encodeURIComponent(thread)}"]`).count()).toBe(1);
    expect(await row.textContent()).toContain("one-shot");
    await screenshot(page, "schedules");

    // It fires: the mock LLM is asked with its text, and the answer lands in the thread.
    await waitFor(
      () =>
        llm.requests.some((r) =>
          r.messages.some((m) => contentText(m.content).includes("oneshot-marker")),
        )
          ? true
          : undefined,
      60_000,
      "the one-shot's prompt at the mock LLM",
    );
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    const answer = await answered(thread, "oneshot-marker");
    expect(answer.text).toContain(`[scheduled event "${event?.id}"] oneshot-marker`);
    // A fired one-shot leaves the list at the next refresh (no reload).
    await row.waitFor({ state: "detached", timeout: 30_000 });

    // The chat page shows the answer among the thread's messages.
    await page.goto(`${serve.url}/#/chat/${encodeURIComponent(thread)}`);
    const message = page.locator("[data-message-id]", { hasText: "ack:" }).filter({
      hasText: "oneshot-marker",
    });
    await message.first().waitFor({ timeout: 20_000 });
    expect(await message.first().textContent()).toContain("oneshot-marker");

    expect(foreignRequests(watch, serve.url)).toEqual([]);
    expect(watch.problems).toEqual([]);
    await page.context().close();
  }, 180_000);

  it("a periodic event: a bad cron shows the API's error and keeps the form; create, edit, cancel", async () => {
    const { page, watch } = await openPage(browser, { width: 1200, height: 900 });
    await signIn(page, serve, "#/schedules");
    const form = page.getByRole("form", { name: "New event" });
    await form.waitFor({ timeout: 20_000 });
    await form.getByLabel("Thread", { exact: true }).selectOption({ label: "Another thread…" });
    await form.getByLabel("Thread id").fill("http:api:daily");
    await form.getByLabel("Periodic (cron)").check();
    await form.getByLabel("Cron expression").fill("every morning");
    await form.getByLabel("Time zone").fill("Europe/Berlin");
    await form.getByLabel("Text").fill("daily-marker");
    await form.getByRole("button", { name: "Schedule" }).click();

    const alert = form.getByRole("alert");
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.textContent()).toContain('"schedule" "every morning"');
    // Nothing was written and nothing the user typed was lost.
    expect((await listEvents()).some((e) => e.text === "daily-marker")).toBe(false);
    expect(await form.getByLabel("Cron expression").inputValue()).toBe("every morning");
    expect(await form.getByLabel("Text").inputValue()).toBe("daily-marker");
    expect(await form.getByLabel("Thread id").inputValue()).toBe("http:api:daily");
    expect(await form.getByLabel("Time zone").inputValue()).toBe("Europe/Berlin");

    await form.getByLabel("Cron expression").fill("0 9 * * 1-5");
    expect(await form.textContent()).toContain("weekdays at 09:00");
    await form.getByRole("button", { name: "Schedule" }).click();
    const row = page.locator("tr[data-event-id]", { hasText: "daily-marker" });
    await row.waitFor({ timeout: 20_000 });
    const [event] = (await listEvents()).filter((e) => e.text === "daily-marker");
    expect(event).toMatchObject({
      type: "periodic",
      target: { thread: "http:api:daily" },
      schedule: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
    });
    const id = event?.id as string;
    // 09:00 in Berlin is 07:00 or 08:00 UTC, on a weekday.
    const next = new Date(event?.next_run as string);
    expect([7, 8]).toContain(next.getUTCHours());
    expect(await row.locator("time").getAttribute("title")).toBe(event?.next_run);
    const rowText = await row.textContent();
    expect(rowText).toContain("weekdays at 09:00");
    expect(rowText).toContain("0 9 * * 1-5");
    expect(rowText).toContain("Europe/Berlin");
    // After a success the form is blank again.
    expect(await form.getByLabel("Text").inputValue()).toBe("");

    // Edit: the same form, filled in.
    await row.getByRole("button", { name: `Edit event ${id}` }).click();
    const editForm = page.getByRole("form", { name: `Edit event ${id}` });
    await editForm.waitFor({ timeout: 10_000 });
    expect(await editForm.getByLabel("Text").inputValue()).toBe("daily-marker");
    expect(await editForm.getByLabel("Cron expression").inputValue()).toBe("0 9 * * 1-5");
    expect(await editForm.getByLabel("Time zone").inputValue()).toBe("Europe/Berlin");
    expect(await editForm.getByLabel("Thread", { exact: true }).inputValue()).toBe(
      "http:api:daily",
    );
    await editForm.getByLabel("Text").fill("daily-edited");
    await editForm.getByRole("button", { name: "Save" }).click();
    await page
      .locator("tr[data-event-id]", { hasText: "daily-edited" })
      .waitFor({ timeout: 20_000 });
    const edited = (await listEvents()).find((e) => e.id === id);
    expect(edited).toMatchObject({
      text: "daily-edited",
      schedule: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      target: { thread: "http:api:daily" },
    });
    await screenshot(page, "schedules-periodic");

    // Cancel, confirmed first: asking alone deletes nothing.
    const editedRow = page.locator(`tr[data-event-id="${id}"]`);
    await editedRow.getByRole("button", { name: `Cancel event ${id}` }).click();
    const yes = editedRow.getByRole("button", { name: "Yes, cancel it" });
    await yes.waitFor({ timeout: 10_000 });
    expect((await listEvents()).some((e) => e.id === id)).toBe(true);
    await yes.click();
    await editedRow.waitFor({ state: "detached", timeout: 20_000 });
    expect((await listEvents()).some((e) => e.id === id)).toBe(false);

    expect(foreignRequests(watch, serve.url)).toEqual([]);
    expect(watch.problems.filter((p) => !p.includes("400"))).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("works on a 390-px phone screen in dark mode", async () => {
    const created = await serve.api("/v1/events", {
      method: "POST",
      body: JSON.stringify({
        id: "phone-check",
        type: "periodic",
        thread: "http:api:a-rather-long-thread-name-for-a-phone",
        text: "A long reminder <img src=x onerror=alert(1)> that has to wrap on a narrow phone screen without scrolling sideways.",
        schedule: "*/15 * * * *",
      }),
    });
    expect(created.status).toBe(201);
    const { page, watch } = await openPage(browser, { width: 390, height: 844, dark: true });
    await signIn(page, serve, "#/schedules");
    await page.locator('tr[data-event-id="phone-check"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('tr[data-event-id="phone-check"]').textContent()).toContain(
      "every 15 minutes",
    );
    // Text from the API is text: the tag shows as typed, and no image (nor alert) comes of it.
    expect(
      await page.locator('tr[data-event-id="phone-check"] .event-text').textContent(),
    ).toContain("<img src=x onerror=alert(1)>");
    expect(await page.locator('tr[data-event-id="phone-check"] img').count()).toBe(0);
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    const pageOverflow = await page.evaluate(
      "(() => { const p = document.querySelector('.page'); return p.scrollWidth - p.clientWidth; })()",
    );
    expect(pageOverflow).toBeLessThanOrEqual(0);
    expect(await page.evaluate("getComputedStyle(document.body).backgroundColor")).toBe(
      "rgb(15, 17, 21)",
    );
    await screenshot(page, "schedules-phone-dark");
    expect(watch.problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});
