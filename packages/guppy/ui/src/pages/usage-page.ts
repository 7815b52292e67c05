import { html } from "htm/preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import "uplot/dist/uPlot.min.css";
import "./usage-page.css";
import { errorText } from "../api/client.js";
import { gatewayStatus, type StatusJson } from "../api/status.js";
import { type UsageReportJson, type UsageTotalsJson, usageReport } from "../api/usage.js";
import { dollars } from "../format.js";
import { UsageBreakdown } from "./usage/usage-breakdown.js";
import { type ChartSeries, UsageChart } from "./usage/usage-chart.js";
import {
  cacheHitRatio,
  costText,
  everyDay,
  formatCostShort,
  formatRatio,
  formatTokens,
  stack,
  type UsageDay,
} from "./usage/usage-series.js";

// Issue 38 item 5: what the agent used and spent, from the usage ledger (GET /v1/usage) and
// today's and this month's totals (GET /v1/status): tokens per day stacked, cost per day, the
// cache-hit ratio, cost by thread and by model, over the last 7, 30 or 90 days.

const RANGES = [7, 30, 90] as const;
type Range = (typeof RANGES)[number];

interface Ledger {
  days: UsageDay[];
  total: UsageTotalsJson;
  byThread: UsageReportJson<"thread">;
  byModel: UsageReportJson<"model">;
}

const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const axisTokens = (n: number) => compact.format(n);
/** Dollars with as many decimals as the axis's step needs (0.005 apart: three). */
const axisCost = (n: number, step: number) =>
  `$${n.toFixed(Math.min(6, Math.max(2, Math.ceil(-Math.log10(step || 1)))))}`;
const axisRatio = (r: number) => `${Math.round(r * 100)}%`;
const ratioOf = (r: number) => formatRatio(r);

export function UsagePage() {
  const [range, setRange] = useState<Range>(30);
  const [reload, setReload] = useState(0);
  const [ledger, setLedger] = useState<Ledger>();
  const [recent, setRecent] = useState<StatusJson["usage"]>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let live = true;
    setLoading(true);
    // The ledger's report and the status's totals fail apart: one missing leaves the other shown.
    const failed = (e: unknown) => {
      if (live) setError(errorText(e));
    };
    const ledgerDone = Promise.all([
      usageReport(range, "day"),
      usageReport(range, "thread"),
      usageReport(range, "model"),
    ]).then(([byDay, byThread, byModel]) => {
      if (live) setLedger({ days: everyDay(byDay), total: byDay.total, byThread, byModel });
    });
    const recentDone = gatewayStatus().then(({ usage: totals }) => {
      if (live) setRecent(totals);
    });
    Promise.all([ledgerDone, recentDone])
      .then(() => {
        if (live) setError(undefined);
      }, failed)
      .finally(() => {
        if (live) setLoading(false);
      });
    return () => {
      live = false;
    };
  }, [range, reload]);

  return html`
    <section class="usage" aria-label="Usage" aria-busy=${loading ? "true" : "false"}>
      <div class="usage-head">
        <h1>Usage</h1>
        <div class="usage-range" role="group" aria-label="Range">
          ${RANGES.map(
            (r) => html`<button
              type="button"
              class=${r === range ? "" : "secondary"}
              aria-pressed=${r === range ? "true" : "false"}
              onClick=${() => setRange(r)}
            >
              ${r} days
            </button>`,
          )}
          <button
            type="button"
            class="secondary"
            onClick=${() => setReload((n) => n + 1)}
            disabled=${loading}
          >
            Refresh
          </button>
        </div>
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${recent ? html`<${RecentTotals} recent=${recent} />` : null}
      ${ledger ? html`<${LedgerView} ledger=${ledger} range=${range} />` : null}
      ${!ledger && loading ? html`<p class="muted">Loading…</p>` : null}
    </section>
  `;
}

function RecentTotals({ recent }: { recent: StatusJson["usage"] }) {
  return html`
    <div class="usage-totals">
      <${TotalsCard} title="Today" totals=${recent.today} />
      <${TotalsCard} title="This month" totals=${recent.month} />
    </div>
  `;
}

function TotalsCard({ title, totals }: { title: string; totals: UsageTotalsJson }) {
  const allSubscription = totals.requests > 0 && totals.subscription_requests === totals.requests;
  return html`
    <section class="card usage-total" aria-label=${title}>
      <h2>${title}</h2>
      <p class="usage-cost">
        ${allSubscription ? "subscription" : formatCostShort(totals.cost)}
      </p>
      <dl>
        <dt>Requests</dt>
        <dd>
          ${formatTokens(totals.requests)}${
            totals.subscription_requests > 0 && !allSubscription
              ? ` (${formatTokens(totals.subscription_requests)} on subscription)`
              : ""
          }
        </dd>
        <dt>Input</dt>
        <dd>${formatTokens(totals.input)}</dd>
        <dt>Cache read</dt>
        <dd>${formatTokens(totals.cache_read)}</dd>
        <dt>Output</dt>
        <dd>${formatTokens(totals.output)}</dd>
      </dl>
    </section>
  `;
}

function LedgerView({ ledger, range }: { ledger: Ledger; range: Range }) {
  const { days } = ledger;
  const charts = useMemo(() => {
    const dayKeys = days.map((d) => d.day);
    const input = days.map((d) => d.input);
    const cache = days.map((d) => d.cache_read);
    const output = days.map((d) => d.output);
    const [inputTop, cacheTop, outputTop] = stack([input, cache, output]);
    // Drawn largest first: each smaller bar covers the bottom of the one before.
    const tokens: ChartSeries[] = [
      { label: "Output", colorVar: "--usage-output", values: outputTop ?? [], shown: output },
      { label: "Cache read", colorVar: "--usage-cache", values: cacheTop ?? [], shown: cache },
      { label: "Input", colorVar: "--usage-input", values: inputTop ?? [], shown: input },
    ];
    const cost: ChartSeries[] = [
      { label: "Cost", colorVar: "--usage-cost", values: days.map((d) => d.cost) },
    ];
    const ratio: ChartSeries[] = [
      { label: "Cache hits", colorVar: "--usage-cache", values: days.map(cacheHitRatio) },
    ];
    return { dayKeys, tokens, cost, ratio };
  }, [days]);
  const newestFirst = [...days].reverse();
  return html`
    <p class="muted usage-range-total">${rangeSummary(ledger.total, range)}</p>
    <div class="usage-charts">
      <${UsageChart}
        title="Tokens per day"
        days=${charts.dayKeys}
        series=${charts.tokens}
        kind="bars"
        format=${formatTokens}
        axisFormat=${axisTokens}
      >
        <${Numbers}
          head=${["Input", "Cache read", "Cache write", "Output"]}
          rows=${newestFirst.map((d) => [
            d.day,
            formatTokens(d.input),
            formatTokens(d.cache_read),
            formatTokens(d.cache_write),
            formatTokens(d.output),
          ])}
        />
      <//>
      <${UsageChart}
        title="Cost per day"
        days=${charts.dayKeys}
        series=${charts.cost}
        kind="bars"
        format=${dollars}
        axisFormat=${axisCost}
      >
        <${Numbers}
          head=${["Requests", "Cost"]}
          rows=${newestFirst.map((d) => [d.day, formatTokens(d.requests), costText(d)])}
        />
      <//>
      <${UsageChart}
        title="Cache-hit ratio per day"
        days=${charts.dayKeys}
        series=${charts.ratio}
        kind="line"
        format=${ratioOf}
        axisFormat=${axisRatio}
        yMax=${1}
      >
        <${Numbers}
          head=${["Cache read", "Input", "Cache hits"]}
          rows=${newestFirst.map((d) => [
            d.day,
            formatTokens(d.cache_read),
            formatTokens(d.input),
            formatRatio(cacheHitRatio(d)),
          ])}
        />
      <//>
    </div>
    <div class="usage-breakdowns">
      <${UsageBreakdown} title="Cost by thread" report=${ledger.byThread} />
      <${UsageBreakdown} title="Cost by model" report=${ledger.byModel} />
    </div>
  `;
}

/** One line on the range's totals: requests, tokens, cost. */
function rangeSummary(total: UsageTotalsJson, range: Range): string {
  const tokens = total.input + total.cache_read + total.output;
  return `Last ${range} days: ${formatTokens(total.requests)} requests, ${formatTokens(tokens)} tokens, ${costText(total)}.`;
}

/** A chart's numbers, one row per day (newest first), behind "Show numbers". */
function Numbers({ head, rows }: { head: string[]; rows: string[][] }) {
  return html`
    <details class="usage-numbers">
      <summary>Show numbers</summary>
      <div class="table-wrap">
        <table class="data">
          <thead>
            <tr>
              <th scope="col">Day</th>
              ${head.map((h) => html`<th scope="col" class="num">${h}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              ([day, ...cells]) => html`<tr key=${day}>
                <th scope="row">${day}</th>
                ${cells.map((c) => html`<td class="num">${c}</td>`)}
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>
  `;
}
