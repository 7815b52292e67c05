import { html } from "htm/preact";
import "./chat.css";
import { ThreadList } from "./thread-list.js";
import { ThreadView } from "./thread-view.js";

/** Chat: the threads beside the open one (on a phone, one or the other). */
export function ChatPage({ threadId }: { threadId: string | undefined }) {
  return html`
    <div class=${`chat ${threadId ? "has-thread" : ""}`}>
      <${ThreadList} selected=${threadId} />
      ${
        threadId
          ? html`<${ThreadView} key=${threadId} threadId=${threadId} />`
          : html`<section class="thread-empty"><p class="muted">Pick a thread, or start one.</p></section>`
      }
    </div>
  `;
}
