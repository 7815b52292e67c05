import { html } from "htm/preact";

/** Placeholder until this page is built (issue 38). */
export function StatusPage() {
  return html`<section aria-label="status"><h1>status</h1><p>Not built yet.</p></section>`;
}
