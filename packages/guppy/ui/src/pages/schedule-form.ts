import { html } from "htm/preact";
import { useId, useState } from "preact/hooks";
import { errorText } from "../api/client.js";
import {
  createEvent,
  type EventBody,
  type EventJson,
  editEvent,
  type ScheduledEventType,
} from "../api/events.js";
import {
  browserZone,
  cronWords,
  isoWithOffset,
  localInputValue,
  offsetText,
} from "./schedule-time.js";

/** The thread select's own choices (a thread id always has a `:`, these have none). */
const OTHER = "+other";
const KEEP = "+keep";

type Kind = ScheduledEventType;

interface FormValues {
  /** A thread id from the list, OTHER (the text field's) or KEEP (an edit's channel target). */
  threadChoice: string;
  threadText: string;
  kind: Kind;
  /** datetime-local value: the browser's local time. */
  at: string;
  cron: string;
  timezone: string;
  text: string;
}

/** An hour from now on the minute: a one-shot's starting value. */
function inAnHour(): string {
  const date = new Date(Date.now() + 3_600_000);
  date.setSeconds(0, 0);
  return localInputValue(date);
}

function initialValues(threads: string[], event: EventJson | undefined): FormValues {
  if (!event) {
    return {
      threadChoice: threads[0] ?? OTHER,
      threadText: "",
      kind: "one-shot",
      at: inAnHour(),
      cron: "",
      timezone: browserZone(),
      text: "",
    };
  }
  const when = event.next_run ?? event.schedule;
  const at =
    event.type === "one-shot" && when && !Number.isNaN(Date.parse(when))
      ? localInputValue(new Date(when))
      : inAnHour();
  return {
    threadChoice: "thread" in event.target ? event.target.thread : KEEP,
    threadText: "",
    kind: event.type === "periodic" ? "periodic" : "one-shot",
    at,
    cron: event.type === "periodic" ? (event.schedule ?? "") : "",
    timezone: event.timezone ?? "",
    text: event.text,
  };
}

/**
 * The body to send, or the one problem the page can name itself (a time the input does not
 * hold). Everything else is the API's to judge: its 400 names the field as the CLI does.
 */
function bodyOf(values: FormValues, edit: boolean): EventBody | string {
  const body: EventBody = { type: values.kind, text: values.text };
  if (values.threadChoice === OTHER) body.thread = values.threadText.trim();
  else if (values.threadChoice !== KEEP) body.thread = values.threadChoice;
  if (values.kind === "one-shot") {
    const iso = isoWithOffset(values.at);
    if (!iso) return "Run at: pick a date and a time.";
    body.schedule = iso;
  } else {
    body.schedule = values.cron.trim();
    const zone = values.timezone.trim();
    if (zone) body.timezone = zone;
    else if (edit) body.timezone = null;
  }
  return body;
}

export interface ScheduleFormProps {
  /** Thread ids to offer (GET /v1/threads). */
  threads: string[];
  /** The event being edited; none: a new one. */
  event?: EventJson;
  onSaved: (event: EventJson) => void;
  onDiscard: () => void;
}

/**
 * Create or edit an event: a thread (one of the list, or any id typed in), one-shot at a local
 * date-time or periodic on a cron expression, and the text. A failed call leaves every value as
 * typed, with the API's one-line error beside the form.
 */
export function ScheduleForm({ threads, event, onSaved, onDiscard }: ScheduleFormProps) {
  const [values, setValues] = useState<FormValues>(() => initialValues(threads, event));
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<FormValues>) => setValues((v) => ({ ...v, ...patch }));
  const edit = event !== undefined;
  const ids = useId();

  const choices =
    event && "thread" in event.target && !threads.includes(event.target.thread)
      ? [event.target.thread, ...threads]
      : threads;
  const atDate = isoWithOffset(values.at) ? new Date(values.at) : new Date();
  const words = values.kind === "periodic" ? cronWords(values.cron) : undefined;

  const submit = async (e: Event) => {
    e.preventDefault();
    const body = bodyOf(values, edit);
    if (typeof body === "string") {
      setError(body);
      return;
    }
    setBusy(true);
    try {
      const saved = event ? await editEvent(event.id, body) : await createEvent(body);
      setError(undefined);
      onSaved(saved);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  const input = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  return html`
    <form class="schedule-form card" onSubmit=${submit} aria-label=${edit ? `Edit event ${event.id}` : "New event"}>
      <h2>${edit ? html`Edit <code>${event.id}</code>` : "New event"}</h2>
      <div class="field">
        <label for=${`${ids}-thread`}>Thread</label>
        <select
          id=${`${ids}-thread`}
          value=${values.threadChoice}
          onChange=${(e: Event) => set({ threadChoice: input(e) })}
        >
          ${
            event && !("thread" in event.target)
              ? html`<option value=${KEEP}>
                  ${event.target.adapter}:${event.target.channel} (new thread, unchanged)
                </option>`
              : null
          }
          ${choices.map((id) => html`<option value=${id}>${id}</option>`)}
          <option value=${OTHER}>Another thread…</option>
        </select>
      </div>
      ${
        values.threadChoice === OTHER
          ? html`<div class="field">
              <label for=${`${ids}-thread-id`}>Thread id</label>
              <input
                id=${`${ids}-thread-id`}
                value=${values.threadText}
                placeholder="http:api:reminders"
                autocomplete="off"
                onInput=${(e: Event) => set({ threadText: input(e) })}
              />
            </div>`
          : null
      }
      <fieldset class="kind">
        <legend>Kind</legend>
        <label class="inline">
          <input
            type="radio"
            name=${`${ids}-kind`}
            value="one-shot"
            checked=${values.kind === "one-shot"}
            onChange=${() => set({ kind: "one-shot" })}
          />
          Once, at a time
        </label>
        <label class="inline">
          <input
            type="radio"
            name=${`${ids}-kind`}
            value="periodic"
            checked=${values.kind === "periodic"}
            onChange=${() => set({ kind: "periodic" })}
          />
          Periodic (cron)
        </label>
      </fieldset>
      ${
        values.kind === "one-shot"
          ? html`<div class="field">
              <label for=${`${ids}-at`}>Run at</label>
              <input
                id=${`${ids}-at`}
                type="datetime-local"
                step="1"
                value=${values.at}
                aria-describedby=${`${ids}-at-hint`}
                onInput=${(e: Event) => set({ at: input(e) })}
              />
              <span class="hint" id=${`${ids}-at-hint`}>
                Your local time: ${browserZone()} (UTC${offsetText(atDate)})
              </span>
            </div>`
          : html`<div class="field">
                <label for=${`${ids}-cron`}>Cron expression</label>
                <input
                  id=${`${ids}-cron`}
                  class="mono"
                  value=${values.cron}
                  placeholder="0 9 * * 1-5"
                  autocomplete="off"
                  spellcheck=${false}
                  aria-describedby=${`${ids}-cron-hint`}
                  onInput=${(e: Event) => set({ cron: input(e) })}
                />
                <span class="hint" id=${`${ids}-cron-hint`}>
                  minute hour day month weekday${words ? html` — <strong>${words}</strong>` : null}
                </span>
              </div>
              <div class="field">
                <label for=${`${ids}-zone`}>Time zone</label>
                <input
                  id=${`${ids}-zone`}
                  value=${values.timezone}
                  placeholder="the gateway's (GUPPY_TIMEZONE)"
                  autocomplete="off"
                  aria-describedby=${`${ids}-zone-hint`}
                  onInput=${(e: Event) => set({ timezone: input(e) })}
                />
                <span class="hint" id=${`${ids}-zone-hint`}>
                  The zone the cron is read in (empty: the gateway's); yours is ${browserZone()}.
                </span>
              </div>`
      }
      <div class="field">
        <label for=${`${ids}-text`}>Text</label>
        <textarea
          id=${`${ids}-text`}
          rows="3"
          value=${values.text}
          onInput=${(e: Event) => set({ text: input(e) })}
        ></textarea>
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <div class="actions">
        <button type="submit" disabled=${busy}>${edit ? "Save" : "Schedule"}</button>
        ${
          edit
            ? html`<button type="button" class="secondary" onClick=${onDiscard}>
                Discard changes
              </button>`
            : null
        }
      </div>
    </form>
  `;
}
