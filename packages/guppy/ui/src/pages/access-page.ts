import { html } from "htm/preact";

/** Placeholder until this page is built (issue 38). */
export function AccessPage() {
  return html`<section aria-label="access"><h1>access</h1><p>Not built yet.</p></section>`;
}
