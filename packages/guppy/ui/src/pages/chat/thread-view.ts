import { html } from "htm/preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, errorText } from "../../api/client.js";
import {
  MESSAGE_PAGE,
  type MessageJson,
  type ThreadStatusJson,
  threadMessages,
  threadStatus,
} from "../../api/threads.js";
import "./chat.css";
import { useVisiblePoll } from "../../use-poll.js";
import { LiveThread } from "./live-thread.js";
import { MessageList } from "./message-list.js";
import { ThreadHeader } from "./thread-header.js";

/** How often the open thread's status is asked for while the tab is visible. */
const STATUS_POLL_MS = 2000;

const notFound = (e: unknown) => e instanceof ApiError && e.status === 404;

/**
 * One thread: its head (status), its messages from GET …/messages page by page, then the live
 * run and the composer (LiveThread). A thread that does not exist yet (a new one) shows empty
 * until its first message makes it.
 */
export function ThreadView({ threadId }: { threadId: string }) {
  const [messages, setMessages] = useState<MessageJson[]>([]);
  const [nextBefore, setNextBefore] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const current = useRef<MessageJson[]>([]);
  const show = (list: MessageJson[]) => {
    current.current = list;
    setMessages(list);
  };

  /** The newest page, joined to what is shown (older pages read so far stay). */
  const reload = useCallback(async () => {
    try {
      const page = await threadMessages(threadId, { limit: MESSAGE_PAGE });
      const shown = current.current;
      const ids = new Set(shown.map((m) => m.id));
      const fresh = page.messages.filter((m) => !ids.has(m.id));
      if (shown.length === 0 || (fresh.length > 0 && fresh.length === page.messages.length)) {
        // First load, or more new messages than a page: start again from the newest.
        show(page.messages);
        setNextBefore(page.next_before);
      } else if (fresh.length > 0) {
        show([...shown, ...fresh]);
      }
      setError(undefined);
    } catch (e) {
      if (!notFound(e)) setError(errorText(e));
    } finally {
      setLoaded(true);
    }
  }, [threadId]);

  const loadOlder = useCallback(async () => {
    const first = current.current[0];
    if (!nextBefore || !first) return;
    try {
      const page = await threadMessages(threadId, { limit: MESSAGE_PAGE, before: first.id });
      show([...page.messages, ...current.current]);
      setNextBefore(page.next_before);
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  }, [threadId, nextBefore]);

  useEffect(() => {
    reload();
  }, [reload]);

  return html`
    <section class="thread-view" aria-label=${`Thread ${threadId}`} aria-busy=${!loaded}>
      <${LiveHeader} threadId=${threadId} onMoreMessages=${reload} />
      ${error ? html`<p class="error thread-error" role="alert">${error}</p>` : null}
      <${MessageList} messages=${messages} hasOlder=${nextBefore !== null} loadOlder=${loadOlder}>
        ${
          loaded && messages.length === 0
            ? html`<p class="muted thread-note">No messages yet: write the first one below.</p>`
            : null
        }
        <${LiveThread} threadId=${threadId} onSettled=${reload} />
      <//>
    </section>
  `;
}

/**
 * The head, kept up to date apart from the messages (a poll re-renders only it). When the
 * thread's message count grows — a message from another channel, a run that ended — the newest
 * messages are loaded.
 */
function LiveHeader({
  threadId,
  onMoreMessages,
}: {
  threadId: string;
  onMoreMessages: () => void;
}) {
  const [status, setStatus] = useState<ThreadStatusJson | null | undefined>();
  const count = useRef<number | undefined>(undefined);
  /** Whether the thread was there at the last look (undefined: not asked yet). */
  const existed = useRef<boolean | undefined>(undefined);
  useVisiblePoll(
    () =>
      threadStatus(threadId).then(
        (s) => {
          setStatus(s);
          // More messages than last seen, or a thread that did not exist at the last look.
          if (count.current !== undefined && s.messages !== count.current) onMoreMessages();
          else if (count.current === undefined && existed.current === false) onMoreMessages();
          count.current = s.messages;
          existed.current = true;
        },
        (e) => {
          if (!notFound(e)) return;
          setStatus(null);
          existed.current = false;
        },
      ),
    STATUS_POLL_MS,
    [threadId],
  );
  return html`<${ThreadHeader} threadId=${threadId} status=${status} />`;
}
