import { html } from "htm/preact";

/**
 * Markdown from the model or a user, rendered as elements (never as HTML text, so nothing in it
 * can inject markup). Placeholder: plain text until the renderer is built.
 */
export function Markdown({ text }: { text: string }) {
  return html`<div class="md">${text}</div>`;
}
