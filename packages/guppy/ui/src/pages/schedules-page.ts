import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api/client.js";
import { cancelEvent, type EventJson, listEvents, scheduleForm } from "../api/events.js";
import { listThreads } from "../api/threads.js";
import { localTime, timeUntil } from "../format.js";
import { routeHref } from "../router.js";
import { ScheduleForm } from "./schedule-form.js";
import { cronWords } from "./schedule-time.js";
import "./schedules-page.css";

/** How often the list is read again while the page is visible: fired one-shots leave it. */
const REFRESH_MS = 5000;

/** Soonest first; events that never fire again last; then by id. */
function byNextRun(a: EventJson, b: EventJson): number {
  const at = (e: EventJson) => (e.next_run ? Date.parse(e.next_run) : Number.POSITIVE_INFINITY);
  return at(a) - at(b) || a.id.localeCompare(b.id);
}

/**
 * Schedules (issue 38 item 4): the gateway's scheduled events with their next run in the
 * browser's local time, and a form to create, edit and cancel them (GET/POST /v1/events,
 * PATCH/DELETE /v1/events/{id}). The list is read again every few seconds while visible.
 */
export function SchedulesPage() {
  const [events, setEvents] = useState<EventJson[] | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [threads, setThreads] = useState<string[] | undefined>();
  const [editing, setEditing] = useState<EventJson | undefined>();
  const [formKey, setFormKey] = useState(0);
  const [confirming, setConfirming] = useState<string | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [now, setNow] = useState(() => Date.now());
  const loading = useRef(false);
  const formRef = useRef<HTMLDivElement>(null);

  const refresh = async () => {
    if (loading.current) return;
    loading.current = true;
    try {
      const listing = await listEvents();
      setEvents([...listing.events].sort(byNextRun));
      setLoadError(undefined);
    } catch (error) {
      setLoadError(errorText(error));
    } finally {
      loading.current = false;
      setNow(Date.now());
    }
  };
  const loadThreads = () =>
    listThreads().then(
      (page) => setThreads(page.threads.map((t) => t.id)),
      () => setThreads((known) => known ?? []),
    );

  useEffect(() => {
    void refresh();
    void loadThreads();
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void refresh();
    }, REFRESH_MS);
    const onVisible = () => {
      if (document.visibilityState === "visible") void refresh();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, []);

  const startEdit = (event: EventJson) => {
    setEditing(event);
    setFormKey((k) => k + 1);
    setNotice(undefined);
    requestAnimationFrame(() => {
      formRef.current?.scrollIntoView({ block: "nearest" });
      formRef.current?.querySelector<HTMLElement>("select, input, textarea")?.focus();
    });
  };
  const closeForm = () => {
    setEditing(undefined);
    setFormKey((k) => k + 1);
  };
  const saved = (event: EventJson) => {
    setNotice(`${editing ? "Saved" : "Scheduled"} event ${event.id}.`);
    closeForm();
    void refresh();
    void loadThreads();
  };
  const cancel = async (id: string) => {
    try {
      await cancelEvent(id);
      setActionError(undefined);
      setNotice(`Cancelled event ${id}.`);
      if (editing?.id === id) closeForm();
    } catch (error) {
      setActionError(`Cancel ${id}: ${errorText(error)}`);
    }
    setConfirming(undefined);
    void refresh();
  };

  return html`
    <section class="schedules" aria-label="Schedules">
      <h1>Schedules</h1>
      ${loadError ? html`<p class="error" role="alert">${loadError}</p>` : null}
      ${actionError ? html`<p class="error" role="alert">${actionError}</p>` : null}
      <p class="muted" role="status">${notice ?? ""}</p>
      ${
        events === undefined
          ? loadError
            ? null
            : html`<p class="muted" aria-busy="true">Loading…</p>`
          : events.length === 0
            ? html`<p class="muted">No scheduled events.</p>`
            : html`<${EventTable}
                events=${events}
                now=${now}
                confirming=${confirming}
                onEdit=${startEdit}
                onAskCancel=${setConfirming}
                onCancel=${cancel}
              />`
      }
      <div ref=${formRef}>
        ${
          threads === undefined
            ? null
            : html`<${ScheduleForm}
                key=${formKey}
                threads=${threads}
                event=${editing}
                onSaved=${saved}
                onDiscard=${closeForm}
              />`
        }
      </div>
    </section>
  `;
}

interface EventTableProps {
  events: EventJson[];
  now: number;
  confirming: string | undefined;
  onEdit: (event: EventJson) => void;
  onAskCancel: (id: string | undefined) => void;
  onCancel: (id: string) => void;
}

function EventTable({ events, now, confirming, onEdit, onAskCancel, onCancel }: EventTableProps) {
  return html`
    <table class="events">
      <thead>
        <tr>
          <th scope="col">Thread</th>
          <th scope="col">Kind</th>
          <th scope="col">Schedule</th>
          <th scope="col">Next run</th>
          <th scope="col">Text</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${events.map(
          (event) =>
            html`<tr key=${event.id} data-event-id=${event.id}>
              <td data-label="Thread"><${Target} event=${event} /></td>
              <td data-label="Kind">${event.type}</td>
              <td data-label="Schedule"><${Schedule} event=${event} /></td>
              <td data-label="Next run" class="next-run"><${NextRun} event=${event} now=${now} /></td>
              <td data-label="Text" class="event-text">${event.text}</td>
              <td class="row-actions">
                ${
                  confirming === event.id
                    ? html`<${ConfirmCancel}
                        id=${event.id}
                        onYes=${() => onCancel(event.id)}
                        onNo=${() => onAskCancel(undefined)}
                      />`
                    : html`<button
                          type="button"
                          class="secondary"
                          aria-label=${`Edit event ${event.id}`}
                          onClick=${() => onEdit(event)}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          aria-label=${`Cancel event ${event.id}`}
                          onClick=${() => onAskCancel(event.id)}
                        >
                          Cancel
                        </button>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  `;
}

function Target({ event }: { event: EventJson }) {
  const target = event.target;
  if ("thread" in target) {
    return html`<a href=${routeHref("chat", target.thread)}>${target.thread}</a>`;
  }
  return html`${target.adapter}:${target.channel} <span class="muted">(new thread)</span>`;
}

function Schedule({ event }: { event: EventJson }) {
  const form = scheduleForm(event.type);
  if (form === "none" || event.schedule === null) return html`now`;
  if (form === "time") {
    return html`once <code class="raw">${event.schedule}</code>`;
  }
  const words = cronWords(event.schedule);
  return html`
    ${words ? html`<span class="words">${words}</span>` : null}
    <code class="raw">${event.schedule}</code>
    <span class="zone muted">${event.timezone ?? "gateway's zone"}</span>
  `;
}

function NextRun({ event, now }: { event: EventJson; now: number }) {
  if (!event.next_run) return html`<span class="muted">never</span>`;
  return html`<time datetime=${event.next_run} title=${event.next_run}
      >${localTime(event.next_run)}</time
    >
    <span class="muted">${timeUntil(event.next_run, now)}</span>`;
}

/** The inline "are you sure" of a cancel: focus on its yes button once, when it appears. */
function ConfirmCancel({ id, onYes, onNo }: { id: string; onYes: () => void; onNo: () => void }) {
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => yes.current?.focus(), []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") onNo();
  };
  return html`<span class="confirm" onKeyDown=${onKeyDown}>
    Cancel <code>${id}</code>?
    <button type="button" class="danger" ref=${yes} onClick=${onYes}>Yes, cancel it</button>
    <button type="button" class="secondary" onClick=${onNo}>Keep</button>
  </span>`;
}
