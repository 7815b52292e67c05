import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "../serve/serve-harness.js";
import {
  foreignRequests,
  hasChromium,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
  stopAll,
} from "./ui-harness.js";

/** settings.json's `modelCost`, dollars per million tokens: the turns cost money. */
const PRICE = { input: 2, output: 10 };
const THREAD_A = "http:api:usage-a";
const THREAD_B = "http:api:usage-b";
/** A thread of the seeded, older ledger lines. */
const OLD_THREAD = "http:api:usage-old";
const LOCAL_MODEL = "ollama/llama3.2";
const SUBSCRIPTION_MODEL = "anthropic/claude-sonnet-4-5";

interface LedgerLine {
  time: string;
  thread: string;
  model: string;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  cost: number;
  subscription?: true;
}
interface Totals {
  requests: number;
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  cost: number;
  subscription_requests: number;
}
interface DayReport {
  from: string;
  to: string;
  rows: Array<Totals & { day: string }>;
}

/** `days` days before now, at noon UTC, as the ledger writes times. */
function daysAgo(days: number): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() - days);
  d.setUTCHours(12, 0, 0, 0);
  return d.toISOString();
}

/** The ledger's lines of one UTC day (the gateway runs with GUPPY_TIMEZONE=UTC), summed. */
function sumLedger(home: string, day: string) {
  const lines = readFileSync(join(home, "usage.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LedgerLine)
    .filter((l) => l.time.slice(0, 10) === day);
  return {
    requests: lines.length,
    input: lines.reduce((s, l) => s + l.input, 0),
    cacheRead: lines.reduce((s, l) => s + l.cacheRead, 0),
    cacheWrite: lines.reduce((s, l) => s + l.cacheWrite, 0),
    output: lines.reduce((s, l) => s + l.output, 0),
    cost: lines.reduce((s, l) => s + (l.subscription ? 0 : l.cost), 0),
  };
}

/** The cells (th and td) of each body row of the table in `region`, as text. */
async function tableRows(page: Page, region: string): Promise<string[][]> {
  const rows = page.getByRole("region", { name: region }).locator("table.data tbody tr");
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    out.push((await rows.nth(i).locator("th, td").allTextContents()).map((t) => t.trim()));
  }
  return out;
}

/**
 * A screenshot of the whole page: the shell scrolls inside `.page`, so the window is first made
 * as tall as its content.
 */
async function screenshotAll(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? { width: 1200, height: 800 };
  const height = (await page.evaluate(
    `(() => { const p = document.querySelector(".page"); return Math.ceil(p.getBoundingClientRect().top + p.scrollHeight); })()`,
  )) as number;
  await page.setViewportSize({ width: size.width, height: Math.max(height, size.height) });
  await screenshot(page, name);
  await page.setViewportSize(size);
}

const tokens = (text: string | undefined) => Number((text ?? "").replace(/[^0-9]/g, ""));
const dollars = (text: string | undefined) => Number((text ?? "").replace(/^\$/, ""));

/**
 * How many pixels of each chart's canvas are near the colours of its series (read from the
 * page's CSS variables): proof that uPlot drew the data, not only the axes.
 */
const PAINTED = `(() => {
  const rgb = (name) => {
    const probe = document.createElement("span");
    probe.style.color = getComputedStyle(document.querySelector(".usage")).getPropertyValue(name);
    document.body.append(probe);
    const m = getComputedStyle(probe).color.match(/\\d+/g).map(Number);
    probe.remove();
    return m;
  };
  const count = (canvas, colour) => {
    const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 200 && Math.abs(d[i] - colour[0]) + Math.abs(d[i + 1] - colour[1]) + Math.abs(d[i + 2] - colour[2]) < 30) n++;
    }
    return n;
  };
  const canvas = (title) => document.querySelector('section[aria-label="' + title + '"] canvas');
  return {
    canvases: document.querySelectorAll(".usage .chart-box canvas").length,
    input: count(canvas("Tokens per day"), rgb("--usage-input")),
    cache: count(canvas("Tokens per day"), rgb("--usage-cache")),
    output: count(canvas("Tokens per day"), rgb("--usage-output")),
    cost: count(canvas("Cost per day"), rgb("--usage-cost")),
    ratio: count(canvas("Cache-hit ratio per day"), rgb("--usage-cache")),
  };
})()`;

/** Issue 38 item 5: the usage page plots and tabulates the ledger's numbers for the turns just made. */
describe.skipIf(!hasChromium)("control UI usage page (Chromium + guppy serve + aimock)", () => {
  let llm: MockLlm;
  let serve: ServeProcess;
  let browser: Browser;
  let home: string;
  let cleanup: () => void;
  /** Each request's reported usage, in order. */
  const reported: Array<{ input: number; output: number }> = [];

  beforeAll(async () => {
    llm = await startMockLlm((_request, index) => {
      const usage = { input: 1200 + 137 * index, output: 400 + 61 * index };
      reported.push(usage);
      return {
        content: `answer ${index}`,
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      };
    });
    const temp = tempHome();
    home = temp.home;
    cleanup = temp.cleanup;
    writeFileSync(join(home, "settings.json"), JSON.stringify({ modelCost: PRICE }));
    // Older requests, as the ledger keeps them (the mock cannot report cache reads): cached
    // prompts three days ago, a local model at no cost 20 days ago, a subscription 60 days ago.
    const older: LedgerLine[] = [
      {
        time: daysAgo(3),
        thread: OLD_THREAD,
        model: "openai/mock-gpt",
        input: 1000,
        cacheRead: 3000,
        cacheWrite: 0,
        output: 500,
        cost: 0.0123,
      },
      {
        time: daysAgo(20),
        thread: OLD_THREAD,
        model: LOCAL_MODEL,
        input: 5000,
        cacheRead: 0,
        cacheWrite: 0,
        output: 800,
        cost: 0,
      },
      {
        time: daysAgo(60),
        thread: `${OLD_THREAD}~sub-1`,
        model: SUBSCRIPTION_MODEL,
        input: 7000,
        cacheRead: 2000,
        cacheWrite: 100,
        output: 900,
        cost: 0,
        subscription: true,
      },
    ];
    writeFileSync(join(home, "usage.jsonl"), older.map((l) => `${JSON.stringify(l)}\n`).join(""));
    serve = await startServe(home, {
      ...llm.env("openai-completions"),
      GUPPY_TIMEZONE: "UTC",
      GUPPY_SANDBOX: "host",
    });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await stopAll({ browser, serve, peers: [llm], cleanup });
  });

  it("shows the ledger's numbers for the turns just made, in charts and tables", async () => {
    // Three turns: two in one thread, one in another.
    const say = async (thread: string, text: string, answers: number) => {
      const r = await serve.api(`/v1/threads/${thread}/messages`, {
        method: "POST",
        body: JSON.stringify({ text, user: "tester" }),
      });
      expect(r.status).toBe(202);
      await waitFor(
        async () =>
          (await threadMessages(serve, thread)).filter((m) => m.is_bot).length >= answers
            ? true
            : undefined,
        60_000,
        `answer ${answers} in ${thread}`,
      );
    };
    await say(THREAD_A, "first", 1);
    await say(THREAD_B, "second", 1);
    await say(THREAD_A, "third", 2);
    expect(reported).toHaveLength(3);

    // Today (the gateway's, UTC) from the API, and the ledger's lines of that day summed here.
    const apiDay = (await (await serve.api("/v1/usage?days=7&by=day")).json()) as DayReport;
    const today = apiDay.to;
    const ledger = await waitFor(() => {
      const s = sumLedger(home, today);
      return s.requests === 3 ? s : undefined;
    }, 10_000);
    expect(ledger.input).toBe(reported.reduce((s, u) => s + u.input, 0));
    expect(ledger.output).toBe(reported.reduce((s, u) => s + u.output, 0));
    expect(ledger.cost).toBeCloseTo(
      (ledger.input * PRICE.input + ledger.output * PRICE.output) / 1e6,
      10,
    );
    const apiToday = apiDay.rows.find((r) => r.day === today);
    expect(apiToday).toMatchObject({
      requests: 3,
      input: ledger.input,
      cache_read: ledger.cacheRead,
      output: ledger.output,
    });
    expect(apiToday?.cost).toBeCloseTo(ledger.cost, 10);

    const { page, watch } = await openPage(browser);
    await signIn(page, serve, "#/usage");
    const tokensRegion = page.getByRole("region", { name: "Tokens per day" });
    await tokensRegion
      .locator("table.data tbody tr")
      .first()
      .waitFor({ state: "attached", timeout: 30_000 });

    // The default range: 30 days, every day a row (newest first), today's equal to the ledger's.
    expect(await page.getByRole("button", { name: "30 days" }).getAttribute("aria-pressed")).toBe(
      "true",
    );
    const tokenRows = await tableRows(page, "Tokens per day");
    expect(tokenRows).toHaveLength(30);
    expect(tokenRows[0]?.[0]).toBe(today);
    const [, input, cacheRead, cacheWrite, output] = tokenRows[0] ?? [];
    expect([tokens(input), tokens(cacheRead), tokens(cacheWrite), tokens(output)]).toEqual([
      ledger.input,
      ledger.cacheRead,
      ledger.cacheWrite,
      ledger.output,
    ]);
    // A day without requests is zeros; the seeded day three days back has its cache reads.
    const threeDaysAgo = daysAgo(3).slice(0, 10);
    expect(
      tokenRows
        .find((r) => r[0] === threeDaysAgo)
        ?.slice(1)
        .map(tokens),
    ).toEqual([1000, 3000, 0, 500]);
    expect(
      tokenRows
        .find((r) => r[0] === daysAgo(5).slice(0, 10))
        ?.slice(1)
        .map(tokens),
    ).toEqual([0, 0, 0, 0]);

    const costRows = await tableRows(page, "Cost per day");
    expect(costRows).toHaveLength(30);
    expect(costRows[0]?.[0]).toBe(today);
    expect(tokens(costRows[0]?.[1])).toBe(3);
    expect(dollars(costRows[0]?.[2])).toBeCloseTo(ledger.cost, 4);
    expect(costRows[0]?.[2]).toBe(`$${(apiToday?.cost ?? -1).toFixed(4)}`);

    const ratioRows = await tableRows(page, "Cache-hit ratio per day");
    expect(ratioRows.find((r) => r[0] === threeDaysAgo)?.[3]).toBe("75.0%");
    expect(ratioRows[0]?.[3]).toBe("0.0%");

    // Today's totals (GET /v1/status) are the ledger's.
    const status = (await (await serve.api("/v1/status")).json()) as {
      usage: { today: Totals };
    };
    expect(status.usage.today.cost).toBeCloseTo(ledger.cost, 10);
    const todayCard = page.getByRole("region", { name: "Today" });
    expect((await todayCard.locator(".usage-cost").textContent())?.trim()).toBe(
      `$${ledger.cost.toFixed(4)}`,
    );
    const todayDl = await todayCard.locator("dd").allTextContents();
    expect(todayDl.map(tokens)).toEqual([3, ledger.input, ledger.cacheRead, ledger.output]);

    // The charts are uPlot canvases that drew each series in its colour.
    // (page.waitForFunction with a string is an eval, which the page's CSP refuses: poll.)
    await expect
      .poll(() => page.locator(".usage .chart-box canvas").count(), { timeout: 30_000 })
      .toBe(3);
    const painted = (await page.evaluate(PAINTED)) as Record<string, number>;
    expect(painted.canvases).toBe(3);
    for (const key of ["input", "cache", "output", "cost", "ratio"]) {
      expect(painted[key], `${key} pixels`).toBeGreaterThan(0);
    }

    // By thread and by model: the test's threads and the model, most cost first.
    const threads = await tableRows(page, "Cost by thread");
    expect(threads.map((r) => r[0])).toEqual([THREAD_A, OLD_THREAD, THREAD_B]);
    const costA = sumOf(reported, [0, 2]);
    expect(dollars(threads[0]?.[3])).toBeCloseTo(costA, 4);
    const models = await tableRows(page, "Cost by model");
    expect(models.map((r) => r[0])).toEqual(["openai/mock-gpt", LOCAL_MODEL]);
    // A local model: its tokens at zero cost.
    expect(models[1]?.slice(1, 4)).toEqual(["1", (5800).toLocaleString("en-US"), "$0.0000"]);

    // Keyboard: the numbers open from their summary.
    await tokensRegion.getByText("Show numbers").focus();
    await page.keyboard.press("Enter");
    expect(await tokensRegion.locator("details").getAttribute("open")).not.toBeNull();
    await screenshotAll(page, "usage");
    await expect
      .poll(() =>
        page.getByText(/^Last 30 days: 5 requests, [0-9,]+ tokens, \$0\.\d{4}\.$/).count(),
      )
      .toBe(1);

    // The range: 7, then 90 days (the subscription's request comes in), then 30 again.
    for (const days of [7, 90, 30]) {
      await page.getByRole("button", { name: `${days} days` }).click();
      await expect
        .poll(() => tokensRegion.locator("table.data tbody tr").count(), { timeout: 30_000 })
        .toBe(days);
      expect(
        await page.getByRole("button", { name: `${days} days` }).getAttribute("aria-pressed"),
      ).toBe("true");
      expect(await tableRows(page, "Cost per day")).toHaveLength(days);
      const modelRows = await tableRows(page, "Cost by model");
      if (days === 7) expect(modelRows.map((r) => r[0])).toEqual(["openai/mock-gpt"]);
      if (days === 90) {
        expect(modelRows.map((r) => r[0])).toEqual([
          "openai/mock-gpt",
          SUBSCRIPTION_MODEL,
          LOCAL_MODEL,
        ]);
        expect(modelRows[1]?.[3]).toBe("subscription");
        // The subagent's request counts toward its parent thread.
        const threadRows = await tableRows(page, "Cost by thread");
        expect(threadRows.map((r) => r[0])).toContain(OLD_THREAD);
        expect(threadRows.map((r) => r[0])).not.toContain(`${OLD_THREAD}~sub-1`);
      }
    }
    // The system turning dark redraws the charts in the dark colours (PAINTED reads the
    // variables anew: the light blue is too far from the dark one to be counted).
    await page.emulateMedia({ colorScheme: "dark" });
    await expect
      .poll(async () => ((await page.evaluate(PAINTED)) as Record<string, number>).input, {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
    expect(foreignRequests(watch, serve.url)).toEqual([]);
    expect(watch.problems).toEqual([]);
    await page.context().close();
  }, 180_000);

  it("shows a failed call as one line and keeps what did load", async () => {
    const { page, watch } = await openPage(browser);
    // The status route answering as a gateway without one does (status-route.ts): the ledger's
    // charts still show, the failure is one line in an alert.
    await page.route("**/v1/status", (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({
          error: { message: "This gateway gives no status.", type: "unavailable" },
        }),
      }),
    );
    await signIn(page, serve, "#/usage");
    const alert = page.getByRole("alert");
    await alert.waitFor({ timeout: 30_000 });
    expect((await alert.textContent())?.trim()).toBe("This gateway gives no status.");
    await page
      .getByRole("region", { name: "Tokens per day" })
      .locator("canvas")
      .first()
      .waitFor({ timeout: 30_000 });
    expect(await page.getByRole("region", { name: "Today" }).count()).toBe(0);
    expect(watch.problems.filter((p) => !p.includes("503"))).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("works on a 390-px phone screen in dark mode", async () => {
    const { page, watch } = await openPage(browser, { width: 390, height: 844, dark: true });
    await signIn(page, serve, "#/usage");
    await page
      .getByRole("region", { name: "Tokens per day" })
      .locator("canvas")
      .first()
      .waitFor({ timeout: 30_000 });
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    // The charts fit the narrow page and took their colours from the dark scheme.
    const widths = (await page.evaluate(
      `[...document.querySelectorAll(".usage .chart-box")].map((b) => [b.clientWidth, b.querySelector(".uplot").offsetWidth])`,
    )) as Array<[number, number]>;
    expect(widths).toHaveLength(3);
    for (const [box, chart] of widths) expect(chart).toBeLessThanOrEqual(box);
    const painted = (await page.evaluate(PAINTED)) as Record<string, number>;
    expect(painted.input).toBeGreaterThan(0);
    await screenshotAll(page, "usage-phone-dark");
    expect(watch.problems).toEqual([]);
    await page.context().close();
  }, 120_000);
});

/** The cost of the mock's requests at `indexes`, at PRICE. */
function sumOf(reported: Array<{ input: number; output: number }>, indexes: number[]): number {
  return indexes.reduce(
    (s, i) =>
      s +
      ((reported[i]?.input ?? 0) * PRICE.input + (reported[i]?.output ?? 0) * PRICE.output) / 1e6,
    0,
  );
}
