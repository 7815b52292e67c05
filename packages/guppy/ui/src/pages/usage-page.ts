import { html } from "htm/preact";

/** Placeholder until this page is built (issue 38). */
export function UsagePage() {
  return html`<section aria-label="usage"><h1>usage</h1><p>Not built yet.</p></section>`;
}
