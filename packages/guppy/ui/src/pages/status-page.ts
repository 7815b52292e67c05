import { html } from "htm/preact";
import { gatewayStatus, type StatusJson } from "../api/status.js";
import type { UsageTotalsJson } from "../api/usage.js";
import "./status-page.css";
import { count, dollars, duration, localTime, megabytes } from "../format.js";
import { usePollWhileVisible } from "../use-poll.js";

/**
 * The gateway at a glance (issue 38 item 6), from GET /v1/status every 5 s while the tab is
 * visible: model, channels, uptime, memory, threads running and queued, scheduled events, today's
 * and the month's usage, and the last warnings and errors of its log.
 */
export function StatusPage() {
  const { data, error } = usePollWhileVisible(gatewayStatus);
  return html`
    <section aria-labelledby="status-title" class="status-page">
      <h1 id="status-title">Status</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${data ? html`<${StatusView} status=${data} />` : error ? null : html`<p class="muted" aria-busy="true">Loading…</p>`}
    </section>
  `;
}

function StatusView({ status }: { status: StatusJson }) {
  const next = status.events.next;
  return html`
    <div class="status-grid">
      <${Fact} label="Model" testid="model"><code>${status.model}</code><//>
      <${Fact} label="Uptime" testid="uptime">
        ${duration(status.uptime_seconds)}
        <span class="muted small">since ${localTime(status.started)} · pid ${status.pid}</span>
      <//>
      <${Fact} label="Memory (RSS)" testid="memory">
        ${megabytes(status.memory.rss_bytes)}
        <span class="muted small">heap ${megabytes(status.memory.heap_used_bytes)}</span>
      <//>
      <${Fact} label="Threads" testid="threads">
        ${status.threads.running} running, ${status.threads.queued} queued
        <span class="muted small">${status.threads.loaded} loaded</span>
      <//>
      <${Fact} label="Scheduled events" testid="events">
        ${status.events.count}
        <span class="muted small">
          ${next ? `next: ${next.id} at ${localTime(next.at)} (${next.target})` : "none due"}
        </span>
      <//>
    </div>
    <h2 id="channels-title">Channels</h2>
    <ul class="status-channels" aria-labelledby="channels-title">
      ${status.channels.map(
        (c) => html`<li class=${`channel ${c.state}`}>
          <span class="dot" aria-hidden="true"></span>
          <span class="name">${c.name}</span>
          <span class="state">${c.state}</span>
        </li>`,
      )}
    </ul>
    <h2 id="usage-title">Usage</h2>
    <table aria-labelledby="usage-title" class="status-usage">
      <thead>
        <tr>
          <th scope="col"><span class="visually-hidden">Measure</span></th>
          <th scope="col" class="num">Today</th>
          <th scope="col" class="num">This month</th>
        </tr>
      </thead>
      <tbody>
        ${USAGE_ROWS.map(
          ([label, value]) => html`<tr>
            <th scope="row">${label}</th>
            <td class="num">${value(status.usage.today)}</td>
            <td class="num">${value(status.usage.month)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <h2 id="errors-title">Recent errors</h2>
    ${
      status.recent_errors.length === 0
        ? html`<p class="muted">No warnings or errors logged since the gateway started.</p>`
        : html`<ol class="status-errors" aria-labelledby="errors-title" reversed>
            ${[...status.recent_errors].reverse().map(
              (e) => html`<li class=${e.level === "warn" ? "warn" : "bad"}>
                <time datetime=${e.time}>${localTime(e.time)}</time>
                <span class="message">${e.message}</span>
              </li>`,
            )}
          </ol>`
    }
  `;
}

function Fact({ label, testid, children }: { label: string; testid: string; children?: unknown }) {
  return html`<div class="card fact" data-testid=${testid} role="group" aria-label=${label}>
    <div class="label">${label}</div>
    <div class="value">${children}</div>
  </div>`;
}

/** The usage table's rows (a measure each: the table stays three columns wide on a phone). */
const USAGE_ROWS: ReadonlyArray<[string, (t: UsageTotalsJson) => string]> = [
  ["Requests", (t) => count(t.requests)],
  ["Input tokens", (t) => count(t.input)],
  ["Cache read", (t) => count(t.cache_read)],
  ["Cache write", (t) => count(t.cache_write)],
  ["Output tokens", (t) => count(t.output)],
  [
    "Cost",
    (t) => (t.subscription_requests > 0 ? `${dollars(t.cost)} + subscription` : dollars(t.cost)),
  ],
];
