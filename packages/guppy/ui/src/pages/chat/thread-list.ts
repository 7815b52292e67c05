import { html } from "htm/preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorText } from "../../api/client.js";
import { listAllThreads, type ThreadJson } from "../../api/threads.js";
import { localTime, timeAgo } from "../../format.js";
import { navigate, routeHref } from "../../router.js";
import { useVisiblePoll } from "../../use-poll.js";
import { channelOf, isSubagentThread, newThreadId, stateLabel } from "./thread-format.js";

/** How often the list is asked for anew while the tab is visible. */
const POLL_MS = 2000;
/**
 * Each row's height in pixels (chat.css's .thread-row says the same): rows of one height let the
 * list render only those in view — a home of 1,000 or 20,000 threads costs a screenful of rows.
 */
export const ROW_HEIGHT = 58;
/** Rows rendered above and below the visible ones, so a quick scroll shows no gap. */
const OVERSCAN = 8;

/**
 * The threads, newest activity first, updated live; a filter box and "New thread". Subagents'
 * threads are never rows of their own: a parent's row says how many it has.
 */
export function ThreadList({ selected }: { selected: string | undefined }) {
  const [threads, setThreads] = useState<ThreadJson[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [filter, setFilter] = useState("");
  const signature = useRef("");
  useVisiblePoll(
    () =>
      listAllThreads().then(
        (all) => {
          setError(undefined);
          // The same answer as before: no new render (a poll every two seconds mostly is one),
          // but one every half minute at least, for the relative times.
          const next = `${Math.floor(Date.now() / 30_000)}${JSON.stringify(all)}`;
          if (next === signature.current) return;
          signature.current = next;
          setThreads(all);
        },
        (e) => setError(errorText(e)),
      ),
    POLL_MS,
    [],
  );

  const rows = useMemo(() => sortedRows(threads ?? [], filter), [threads, filter]);
  return html`
    <nav class="thread-list" aria-label="Threads">
      <div class="thread-list-head">
        <label class="visually-hidden" for="thread-filter">Filter threads</label>
        <input
          id="thread-filter"
          type="search"
          placeholder="Filter threads"
          value=${filter}
          onInput=${(e: Event) => setFilter((e.target as HTMLInputElement).value)}
        />
        <button type="button" onClick=${() => navigate("chat", newThreadId())}>New thread</button>
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${
        threads === undefined
          ? html`<p class="muted thread-list-note" aria-busy="true">Loading threads…</p>`
          : rows.length === 0
            ? html`<p class="muted thread-list-note">
                ${filter ? "No thread matches." : "No threads yet."}
              </p>`
            : html`<${Rows} rows=${rows} selected=${selected} />`
      }
    </nav>
  `;
}

interface Row {
  thread: ThreadJson;
  /** Last activity in ms since the epoch (0 when none), for the order. */
  at: number;
  search: string;
}

/** The threads to show, newest activity first (then by id), those matching `filter`. */
function sortedRows(threads: ThreadJson[], filter: string): Row[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const rows: Row[] = [];
  for (const thread of threads) {
    if (isSubagentThread(thread.id)) continue;
    const search = `${thread.id} ${thread.title ?? ""}`.toLowerCase();
    if (!words.every((w) => search.includes(w))) continue;
    const at = thread.last_activity ? Date.parse(thread.last_activity) || 0 : 0;
    rows.push({ thread, at, search });
  }
  return rows.sort((a, b) => b.at - a.at || (a.thread.id < b.thread.id ? -1 : 1));
}

/** The rows in view of the scrolled list (a fixed-height window), keyboard-navigable. */
function Rows({ rows, selected }: { rows: Row[]; selected: string | undefined }) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const focusNext = useRef<number | undefined>(undefined);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    setHeight(el.clientHeight || 600);
    const observer = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  // The open thread scrolled into view when the page opens on it.
  useLayoutEffect(() => {
    const el = scroller.current;
    const index = rows.findIndex((r) => r.thread.id === selected);
    if (!el || index === -1) return;
    scrollRowIntoView(el, index);
  }, [selected]);
  useEffect(() => {
    const index = focusNext.current;
    if (index === undefined) return;
    focusNext.current = undefined;
    scroller.current?.querySelector<HTMLElement>(`[data-index="${index}"]`)?.focus();
  });

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const now = Date.now();
  const onKeyDown = (event: KeyboardEvent) => {
    const key = event.key;
    if (key !== "ArrowDown" && key !== "ArrowUp" && key !== "Home" && key !== "End") return;
    const el = scroller.current;
    const current = Number((document.activeElement as HTMLElement | null)?.dataset.index ?? -1);
    if (!el) return;
    event.preventDefault();
    let index =
      key === "Home"
        ? 0
        : key === "End"
          ? rows.length - 1
          : current + (key === "ArrowDown" ? 1 : -1);
    index = Math.min(rows.length - 1, Math.max(0, index));
    scrollRowIntoView(el, index);
    // A row in view or within the overscan is there already; another comes with the next render.
    const row = el.querySelector<HTMLElement>(`[data-index="${index}"]`);
    if (row) row.focus();
    else focusNext.current = index;
    setScrollTop(el.scrollTop);
  };
  return html`
    <div
      class="thread-rows"
      ref=${scroller}
      onScroll=${(e: Event) => setScrollTop((e.target as HTMLElement).scrollTop)}
      onKeyDown=${onKeyDown}
    >
      <ul class="thread-rows-inner" style=${{ height: `${rows.length * ROW_HEIGHT}px` }}>
        ${rows.slice(first, last).map((row, i) => {
          const index = first + i;
          return html`<${ThreadRow}
            key=${row.thread.id}
            thread=${row.thread}
            index=${index}
            selected=${row.thread.id === selected}
            now=${now}
          />`;
        })}
      </ul>
    </div>
  `;
}

function scrollRowIntoView(el: HTMLElement, index: number): void {
  const top = index * ROW_HEIGHT;
  if (top < el.scrollTop) el.scrollTop = top;
  else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) {
    el.scrollTop = top + ROW_HEIGHT - el.clientHeight;
  }
}

function ThreadRow({
  thread: t,
  index,
  selected,
  now,
}: {
  thread: ThreadJson;
  index: number;
  selected: boolean;
  now: number;
}) {
  const state = stateLabel(t);
  const subagents = t.subagents ?? [];
  const running = subagents.filter((s) => s.state === "running").length;
  return html`<li class="thread-row" style=${{ top: `${index * ROW_HEIGHT}px` }}>
    <a
      href=${routeHref("chat", t.id)}
      data-thread-id=${t.id}
      data-index=${index}
      aria-current=${selected ? "page" : undefined}
      title=${t.id}
    >
      <span class="thread-row-top">
        <span class="channel">${channelOf(t.id)}</span>
        <span class="thread-title">${t.title ?? t.id}</span>
      </span>
      <span class="thread-row-bottom">
        <span class=${`state ${state}`}>${state}</span>
        ${t.queued > 0 ? html`<span class="queued">${t.queued} queued</span>` : null}
        ${
          subagents.length > 0
            ? html`<span class="subagent-count"
                >${subagents.length} subagent${subagents.length === 1 ? "" : "s"}${
                  running ? ` (${running} running)` : ""
                }</span
              >`
            : null
        }
        <time class="activity" datetime=${t.last_activity ?? undefined} title=${t.last_activity ? localTime(t.last_activity) : undefined}
          >${timeAgo(t.last_activity, now)}</time
        >
      </span>
    </a>
  </li>`;
}
