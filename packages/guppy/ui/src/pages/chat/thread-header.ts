import { html } from "htm/preact";
import type { ThreadStatusJson } from "../../api/threads.js";
import { dollars, localTime, tokenCount } from "../../format.js";
import { routeHref } from "../../router.js";
import { stateLabel } from "./thread-format.js";

/**
 * The open thread's head: title and id, state, model, context use and cost, then its subagents
 * and scheduled events. `status` is undefined while it loads and null for a thread that does not
 * exist yet (a new one, made by its first message).
 */
export function ThreadHeader({
  threadId,
  status,
}: {
  threadId: string;
  status: ThreadStatusJson | null | undefined;
}) {
  const back = html`<a class="thread-back" href=${routeHref("chat")}>← Threads</a>`;
  if (!status) {
    return html`<header class="thread-head">
      ${back}
      <h1>${status === null ? "New thread" : threadId}</h1>
      <p class="thread-id muted">${threadId}</p>
    </header>`;
  }
  const state = stateLabel(status);
  const { context, context_window: window } = status.tokens;
  const cost = status.usage?.thread.cost ?? status.cost;
  return html`<header class="thread-head">
    ${back}
    <h1>${status.title ?? threadId}</h1>
    <p class="thread-id muted">${threadId}</p>
    <p class="thread-facts">
      <span class=${`state ${state}`}>${state}</span>
      ${status.queued > 0 ? html`<span class="queued">${status.queued} queued</span>` : null}
      <span title="Model">${status.model}</span>
      <span title="Context tokens / context window"
        >${tokenCount(context)} / ${tokenCount(window)} tokens</span
      >
      <span title="Cost">${dollars(cost)}</span>
    </p>
    ${
      status.subagents?.length
        ? html`<details class="thread-extra">
            <summary>Subagents (${status.subagents.length})</summary>
            <ul class="subagents">
              ${status.subagents.map(
                (s) =>
                  html`<li key=${s.id}>
                    <span class=${`state ${s.state}`}>${s.state}</span>
                    ${s.label ? html`<span>${s.label}</span>` : null}
                    <code>${s.id}</code>
                  </li>`,
              )}
            </ul>
          </details>`
        : null
    }
    ${
      status.events?.length
        ? html`<details class="thread-extra">
            <summary>Scheduled events (${status.events.length})</summary>
            <ul class="events">
              ${status.events.map(
                (e) =>
                  html`<li key=${e.id}>
                    <span class="event-type">${e.type}</span>
                    ${e.schedule ? html`<code>${e.schedule}</code>` : null}
                    <span
                      >next:
                      ${e.next_run ? html`<time datetime=${e.next_run}>${localTime(e.next_run)}</time>` : "none"}</span
                    >
                    <span class="muted">${e.id}</span>
                  </li>`,
              )}
            </ul>
          </details>`
        : null
    }
  </header>`;
}
