import { html } from "htm/preact";
import type { UsageReportJson, UsageTotalsJson } from "../../api/usage.js";
import { routeHref } from "../../router.js";
import { costText, formatTokens } from "./usage-series.js";

// Cost by thread or by model: the ledger's rows as the API orders them (most cost first), each
// with a bar whose CSS width is its share of the largest (of tokens when nothing cost money:
// local models and subscriptions cost nothing per token, yet did work).

export function UsageBreakdown({
  title,
  report,
}: {
  title: string;
  report: UsageReportJson<"thread"> | UsageReportJson<"model">;
}) {
  const by = report.by;
  const rows = report.rows.map((row) => ({
    key: by === "thread" ? (row as { thread: string }).thread : (row as { model: string }).model,
    totals: row as UsageTotalsJson,
  }));
  const tokens = (t: UsageTotalsJson) => t.input + t.cache_read + t.cache_write + t.output;
  const byCost = rows.some((r) => r.totals.cost > 0);
  const measure = (t: UsageTotalsJson) => (byCost ? t.cost : tokens(t));
  const largest = Math.max(0, ...rows.map((r) => measure(r.totals)));
  return html`
    <section class="usage-breakdown card" aria-label=${title}>
      <h2>${title}</h2>
      ${
        rows.length === 0
          ? html`<p class="muted">No requests in this range.</p>`
          : html`<div class="table-wrap">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">${by === "thread" ? "Thread" : "Model"}</th>
                  <th scope="col" class="num">Requests</th>
                  <th scope="col" class="num">Tokens</th>
                  <th scope="col" class="num">Cost</th>
                  <th scope="col" class="bar-col"><span class="visually-hidden">Share</span></th>
                </tr>
              </thead>
              <tbody>
                ${rows.map(
                  (r) => html`<tr key=${r.key}>
                    <th scope="row" class="key">
                      ${
                        by === "thread"
                          ? html`<a href=${routeHref("chat", r.key)}>${r.key}</a>`
                          : r.key
                      }
                    </th>
                    <td class="num">${formatTokens(r.totals.requests)}</td>
                    <td class="num">${formatTokens(tokens(r.totals))}</td>
                    <td class="num">${costText(r.totals)}</td>
                    <td class="bar-col" aria-hidden="true">
                      <span
                        class="bar"
                        style=${{
                          width: `${largest > 0 ? (measure(r.totals) / largest) * 100 : 0}%`,
                        }}
                      ></span>
                    </td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`
      }
    </section>
  `;
}
