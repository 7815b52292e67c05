import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../../api/client.js";
import { listThreads, type ThreadJson } from "../../api/threads.js";
import { routeHref } from "../../router.js";

/** The threads (placeholder: one load, no live updates yet). */
export function ThreadList({ selected }: { selected: string | undefined }) {
  const [threads, setThreads] = useState<ThreadJson[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    listThreads().then(
      (page) => setThreads(page.threads),
      (e) => setError(errorText(e)),
    );
  }, []);
  return html`
    <nav class="thread-list" aria-label="Threads">
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <ul>
        ${threads.map(
          (t) =>
            html`<li>
              <a
                href=${routeHref("chat", t.id)}
                data-thread-id=${t.id}
                aria-current=${t.id === selected ? "true" : undefined}
                >${t.id} <span class=${`state ${t.state}`}>${t.state}</span></a
              >
            </li>`,
        )}
      </ul>
    </nav>
  `;
}
