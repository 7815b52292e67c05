import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { errorText } from "../../api/client.js";
import { sendMessage } from "../../api/threads.js";

/**
 * The thread's live part: the run under way (from its events stream) and the composer.
 * Placeholder: a composer that sends and asks for a reload a moment later.
 */
export function LiveThread({ threadId, onSettled }: { threadId: string; onSettled: () => void }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await sendMessage(threadId, text);
      setText("");
      setTimeout(onSettled, 1000);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return html`
    <form class="composer" onSubmit=${submit}>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <label class="visually-hidden" for="composer-text">Message</label>
      <textarea
        id="composer-text"
        value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
      ></textarea>
      <button type="submit">Send</button>
    </form>
  `;
}
