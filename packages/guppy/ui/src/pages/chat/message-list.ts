import { html } from "htm/preact";
import { Component, type ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import type { MessageJson } from "../../api/threads.js";
import { clockTime, localTime, shortDateTime } from "../../format.js";
import { Markdown } from "../../markdown.js";

// Long threads (5,000 messages and more) stay smooth in two ways. Messages come 50 at a time,
// older pages only when the reader scrolls up to them, so the page holds what was read. And
// each row has `content-visibility: auto` with `contain-intrinsic-size: auto 6rem` (chat.css):
// the browser lays out and paints only rows near the screen, and remembers a row's real height
// once it was shown. That was chosen over a window of rendered rows because messages differ
// widely in height (a word, a table, a long code block): a fixed-height window cannot hold them,
// and a measured one fights the browser's scroll anchoring while older pages come in above;
// with every row in the DOM, find-in-page, selection and screen readers also see the whole
// thread. Rows never re-render unless their message changes (MessageRow).

/** How close to the top (pixels) the reader scrolls before the older page is asked for. */
const LOAD_OLDER_AT = 400;
/** How close to the bottom counts as "at the bottom": new content then keeps it in view. */
const STICK_WITHIN = 48;

export function MessageList({
  messages,
  hasOlder,
  loadOlder,
  children,
}: {
  messages: MessageJson[];
  /** Older messages exist (the last page's `next_before`). */
  hasOlder: boolean;
  /** Loads the page before the first message; resolves once it is in `messages`. */
  loadOlder: () => Promise<void>;
  /** Shown after the messages, in the same scroll (the live run and the composer). */
  children?: ComponentChildren;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const loading = useRef(false);
  const anchor = useRef<{ element: Element; top: number } | undefined>(undefined);
  const state = useRef({ hasOlder, loadOlder });
  state.current = { hasOlder, loadOlder };

  const older = () => {
    const el = scroller.current;
    if (!el || loading.current || !state.current.hasOlder || atBottom.current) return;
    if (el.scrollTop > LOAD_OLDER_AT) return;
    // The first row in view stays where it is on screen while the older page comes in above.
    const top = el.getBoundingClientRect().top;
    const first = Array.from(el.querySelectorAll(".message")).find(
      (row) => row.getBoundingClientRect().bottom > top,
    );
    if (first) anchor.current = { element: first, top: first.getBoundingClientRect().top };
    loading.current = true;
    state.current.loadOlder().finally(() => {
      loading.current = false;
    });
  };

  /** The button's way (keyboard, or a reader who does not scroll): from the top, now. */
  const loadOlderNow = () => {
    const el = scroller.current;
    if (!el) return;
    atBottom.current = false;
    el.scrollTop = 0;
    older();
  };

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_WITHIN;
    older();
  };

  // New messages at the bottom keep a reader who was there at the bottom; an older page keeps
  // the anchor row in place (if the browser's own scroll anchoring did so already, no change).
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const kept = anchor.current;
    anchor.current = undefined;
    if (kept?.element.isConnected) {
      el.scrollTop += kept.element.getBoundingClientRect().top - kept.top;
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
    // A first page shorter than the screen cannot be scrolled up: the older page comes now.
    if (el.scrollHeight <= el.clientHeight + LOAD_OLDER_AT && hasOlder && !loading.current) {
      atBottom.current = false;
      older();
      atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_WITHIN;
    }
  }, [messages]);

  // Rows laid out late (content-visibility) and a streaming answer below change the height:
  // a reader at the bottom stays there.
  useEffect(() => {
    const el = scroller.current;
    const inner = content.current;
    if (!el || !inner) return;
    const observer = new ResizeObserver(() => {
      if (atBottom.current) el.scrollTop = el.scrollHeight;
    });
    observer.observe(inner);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  return html`
    <div class="thread-scroll" ref=${scroller} onScroll=${onScroll}>
      <div class="thread-content" ref=${content}>
        ${
          hasOlder
            ? html`<p class="older muted">
                <button type="button" class="link" onClick=${loadOlderNow}>
                  Load older messages
                </button>
              </p>`
            : messages.length > 0
              ? html`<p class="older muted">Start of the thread</p>`
              : null
        }
        <ol class="messages" aria-label="Messages">
          ${messages.map((m) => html`<${MessageRow} key=${`${m.id}|${m.date}`} message=${m} />`)}
        </ol>
        ${children}
      </div>
    </div>
  `;
}

/** One message: who, when, and its text as Markdown. Re-rendered only when it changes. */
class MessageRow extends Component<{ message: MessageJson }> {
  override shouldComponentUpdate(next: { message: MessageJson }): boolean {
    return next.message !== this.props.message;
  }
  override render() {
    const m = this.props.message;
    return html`<li class=${`message ${m.is_bot ? "bot" : "user"}`} data-message-id=${m.id}>
      <div class="message-meta">
        <span class="from">${m.from}</span>
        <time datetime=${m.date} title=${localTime(m.date)}>${shortTime(m.date)}</time>
      </div>
      <${Markdown} text=${m.text} />
    </li>`;
  }
}

/** The time of day for today's messages, else the date and time. */
function shortTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date();
  return d.toDateString() === today.toDateString() ? clockTime(d) : shortDateTime(d);
}
