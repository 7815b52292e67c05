import { html } from "htm/preact";

/** Placeholder until this page is built (issue 38). */
export function SchedulesPage() {
  return html`<section aria-label="schedules"><h1>schedules</h1><p>Not built yet.</p></section>`;
}
