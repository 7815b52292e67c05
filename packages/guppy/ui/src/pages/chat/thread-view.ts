import { html } from "htm/preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { errorText } from "../../api/client.js";
import { type MessageJson, threadMessages } from "../../api/threads.js";
import { Markdown } from "../../markdown.js";
import { LiveThread } from "./live-thread.js";

/** One thread: its messages (placeholder: the last 50), then the live run and the composer. */
export function ThreadView({ threadId }: { threadId: string }) {
  const [messages, setMessages] = useState<MessageJson[]>([]);
  const [error, setError] = useState<string | undefined>();
  const reload = useCallback(() => {
    threadMessages(threadId, { limit: 50 }).then(
      (page) => setMessages(page.messages),
      (e) =>
        setError(
          e instanceof Error && "status" in e && e.status === 404 ? undefined : errorText(e),
        ),
    );
  }, [threadId]);
  useEffect(reload, [reload]);
  return html`
    <section class="thread-view" aria-label=${`Thread ${threadId}`}>
      <header class="thread-head"><h1>${threadId}</h1></header>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <ol class="messages" aria-live="polite">
        ${messages.map(
          (m) =>
            html`<li class=${`message ${m.is_bot ? "bot" : "user"}`} data-message-id=${m.id}>
              <span class="from">${m.from}</span>
              <${Markdown} text=${m.text} />
            </li>`,
        )}
      </ol>
      <${LiveThread} threadId=${threadId} onSettled=${reload} />
    </section>
  `;
}
