import { html } from "htm/preact";
import { useCallback, useEffect, useReducer, useRef, useState } from "preact/hooks";
import { ApiError, errorText } from "../../api/client.js";
import { type ContextToolsJson, contextTools } from "../../api/context-tools.js";
import { followThreadEvents } from "../../api/thread-events.js";
import { threadStatus } from "../../api/threads.js";
import { Markdown } from "../../markdown.js";
import { Composer } from "./composer.js";
import { initialLive, type LiveRun, liveReducer } from "./live-run.js";
import { ToolRow } from "./tool-row.js";
import "./live.css";

export interface LiveThreadProps {
  threadId: string;
  /**
   * The thread changed (a run ended, a `/new` or `/compact`, or events may have been missed):
   * read its messages again. If it returns a promise (a `() => void` may), the ended run stays
   * shown until it settles.
   */
  onSettled: () => void;
}

/**
 * The thread's live part, below its messages: the tool calls still in its context, the run under
 * way (from GET …/events: the prompt, the answer streaming in, tool calls as rows), queued
 * prompts, one-line notices, and the composer.
 */
export function LiveThread({ threadId, onSettled }: LiveThreadProps) {
  const [state, dispatch] = useReducer(liveReducer, initialLive);
  /** Whether the thread exists: its events stream opens only then (before, it is a 404). */
  const [exists, setExists] = useState<boolean | undefined>();
  const [tools, setTools] = useState<ContextToolsJson | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  /** The thread was made by a prompt sent from here: its stream opens after that prompt. */
  const createdHere = useRef(false);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  const loadTools = useCallback(
    () =>
      contextTools(threadId).then(
        (answer) => {
          setTools(answer);
          setLoadError(undefined);
        },
        (e) => {
          if (!(e instanceof ApiError && e.status === 404)) setLoadError(errorText(e));
        },
      ),
    [threadId],
  );
  const loadStatus = useCallback(
    () =>
      threadStatus(threadId).then(
        (status) => {
          setExists(true);
          dispatch({ type: "status", running: status.state === "running", queued: status.queued });
        },
        (e) => {
          if (e instanceof ApiError && e.status === 404) setExists(false);
          else setLoadError(errorText(e));
        },
      ),
    [threadId],
  );
  /** Everything read again: after a run, a command, or a gap in the events. */
  const refresh = useCallback(async () => {
    await Promise.all([Promise.resolve(settled.current()), loadTools(), loadStatus()]);
  }, [loadTools, loadStatus]);

  useEffect(() => {
    void loadStatus();
    void loadTools();
  }, [loadStatus, loadTools]);

  useEffect(() => {
    if (!exists) return;
    return followThreadEvents(threadId, {
      onEvent: (event) => {
        dispatch({ type: "event", event });
        // A run whose start this stream did not see (opened after it began: a new thread's
        // first run) has no live copy to end: its answer is read from the messages.
        if (event.type === "final") void refresh();
        if (event.type !== "ready") return;
        // Opened after the thread's first prompt was sent, its run may be under way or over
        // already: the messages are read again, not just the status.
        if (createdHere.current) void refresh();
        else void loadStatus();
        createdHere.current = false;
      },
      onGap: () => void refresh(),
    });
  }, [threadId, exists, loadStatus, refresh]);

  // A run ended: the messages are read again, then the live copy of it goes.
  const ended = state.run?.ended ? state.run : undefined;
  useEffect(() => {
    if (!ended) return;
    let gone = false;
    void refresh().finally(() => {
      if (!gone) dispatch({ type: "clear", run: ended });
    });
    return () => {
      gone = true;
    };
  }, [ended, refresh]);

  return html`
    <div class="live-thread">
      ${loadError ? html`<p class="error" role="alert">${loadError}</p>` : null}
      ${tools ? html`<${ContextTools} tools=${tools} />` : null}
      ${state.run ? html`<${RunView} run=${state.run} running=${state.running && !state.run.ended} />` : null}
      <div class="live-status" role="status" aria-live="polite">
        ${state.running && !state.run ? html`<p class="muted">A run is under way…</p>` : null}
        ${
          state.queued > 0
            ? html`<p class="muted live-queued">
                ${state.queued} ${state.queued === 1 ? "prompt" : "prompts"} queued
              </p>`
            : null
        }
        <ul class="live-lines">
          ${state.lines.map(
            (line) => html`<li key=${line.key} class=${`live-line ${line.kind}`}>${line.text}</li>`,
          )}
        </ul>
      </div>
      <${Composer}
        threadId=${threadId}
        running=${state.running}
        onSent=${() => {
          if (exists) return;
          createdHere.current = true;
          setExists(true);
        }}
        onSteered=${(text: string) =>
          dispatch({ type: "line", kind: "report", text: `Steered: ${text}` })}
        onCommand=${(report: string) => {
          dispatch({ type: "line", kind: "report", text: report });
          void refresh();
        }}
      />
    </div>
  `;
}

/** The run under way (or just ended): its prompt, then text and tool rows in their order. */
function RunView({ run, running }: { run: LiveRun; running: boolean }) {
  return html`
    <section
      class="live-run"
      aria-label="Run under way"
      data-state=${running ? "running" : "ended"}
      aria-busy=${running ? "true" : "false"}
    >
      ${run.prompt ? html`<div class="live-prompt"><span class="from">you</span>${run.prompt}</div>` : null}
      <div class="live-answer">
        ${run.items.map((item, i) =>
          item.kind === "text"
            ? html`<${Markdown} key=${i} text=${item.text} />`
            : html`<${ToolRow}
                key=${item.id}
                name=${item.name}
                args=${item.args}
                output=${item.output}
                result=${item.result}
                isError=${item.isError}
                running=${item.result === undefined && running}
              />`,
        )}
        ${running ? html`<p class="muted live-working">Working…</p>` : null}
      </div>
    </section>
  `;
}

/** The tool calls still in the thread's context (GET …/tools), closed by default. */
function ContextTools({ tools }: { tools: ContextToolsJson }) {
  return html`
    <details class="context-tools">
      <summary>Tools in context (${tools.tools.length})</summary>
      ${
        tools.compacted
          ? html`<p class="muted">Older tool calls are in the compaction summary.</p>`
          : null
      }
      ${tools.tools.length === 0 ? html`<p class="muted">No tool calls in the context.</p>` : null}
      <ol class="context-tool-list">
        ${tools.tools.map(
          (t, i) =>
            html`<li key=${t.id || i}>
              ${
                t.prompt && t.prompt !== tools.tools[i - 1]?.prompt
                  ? html`<p class="context-tool-prompt muted">After: ${t.prompt}</p>`
                  : null
              }
              <${ToolRow}
                name=${t.name}
                args=${t.args}
                result=${t.result ?? undefined}
                isError=${t.is_error}
                truncated=${t.result_truncated}
              />
            </li>`,
        )}
      </ol>
    </details>
  `;
}
