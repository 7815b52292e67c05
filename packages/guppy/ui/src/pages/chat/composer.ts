import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, errorText } from "../../api/client.js";
import {
  abortRun,
  compactThread,
  newConversation,
  sendMessage,
  steerRun,
} from "../../api/threads.js";

export interface ComposerProps {
  threadId: string;
  /** A run is under way: sending steers it, and Stop (or Esc) aborts it. */
  running: boolean;
  /** A prompt was accepted (202): its id in the gateway (its events' `message_id`). */
  onSent(sent: { id: string; text: string }): void;
  /** A steer reached the running agent. */
  onSteered(text: string): void;
  /** `/new` or `/compact` is done: one line saying what it did. */
  onCommand(report: string): void;
}

/**
 * What the user typed, as the composer sends it: `/new` and `/compact` alone on their line are
 * the thread's commands (as in the other channels), anything else a message.
 */
export type ComposerAction =
  | { type: "command"; command: "new" | "compact" }
  | { type: "text"; text: string }
  | { type: "none" };

export function composerAction(typed: string): ComposerAction {
  const trimmed = typed.trim();
  if (trimmed === "") return { type: "none" };
  if (trimmed === "/new" || trimmed === "/compact") {
    return { type: "command", command: trimmed === "/new" ? "new" : "compact" };
  }
  return { type: "text", text: typed };
}

/**
 * The message box: Enter sends (Shift+Enter is a newline), Esc stops the run. While a run is
 * under way a message steers it. What was typed stays until the gateway took it.
 */
export function Composer(props: ComposerProps) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  /** Runs `call` as the one call in flight; what was typed is cleared only if it succeeds. */
  const inFlight = async (call: () => Promise<void>, clear: boolean) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await call();
      if (clear) setText("");
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const send = () => {
    const action = composerAction(text);
    if (action.type === "none") return;
    if (action.type === "command") {
      void inFlight(async () => {
        if (action.command === "new") {
          const result = await newConversation(props.threadId);
          props.onCommand(
            result.archived
              ? "New conversation: the old context was archived."
              : "New conversation (there was no context to archive).",
          );
        } else {
          const result = await compactThread(props.threadId);
          props.onCommand(result.report);
        }
      }, true);
      return;
    }
    void inFlight(async () => {
      if (props.running) {
        try {
          await steerRun(props.threadId, action.text);
          props.onSteered(action.text);
          return;
        } catch (e) {
          // The run ended meanwhile: the text becomes the next message instead.
          if (!(e instanceof ApiError && e.type === "nothing_running")) throw e;
        }
      }
      const sent = await sendMessage(props.threadId, action.text);
      props.onSent({ id: sent.id, text: action.text });
    }, true);
  };

  const stop = () => {
    void inFlight(() => abortRun(props.threadId).then(() => undefined), false);
  };

  // Esc stops the run from anywhere on the page, not only in the box (unless something else,
  // such as a field that clears itself on Esc, took the key first).
  const stopRef = useRef(stop);
  stopRef.current = stop;
  useEffect(() => {
    if (!props.running) return;
    const onEscape = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || event.defaultPrevented) return;
      event.preventDefault();
      stopRef.current();
    };
    document.addEventListener("keydown", onEscape);
    return () => document.removeEventListener("keydown", onEscape);
  }, [props.running]);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === "Escape" && props.running) {
      // Taken here; the page-wide listener sees it prevented and leaves it.
      event.preventDefault();
      stop();
    }
  };

  return html`
    <form
      class="composer"
      aria-busy=${busy ? "true" : "false"}
      onSubmit=${(event: Event) => {
        event.preventDefault();
        send();
      }}
    >
      ${error ? html`<p class="error composer-error" role="alert">${error}</p>` : null}
      <label class="visually-hidden" for="composer-text">Message</label>
      <textarea
        id="composer-text"
        rows="3"
        placeholder=${
          props.running
            ? "Steer the run… (Enter steers, Esc stops)"
            : "Message… (Enter sends, Shift+Enter for a new line, /new, /compact)"
        }
        value=${text}
        readOnly=${busy}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown=${onKeyDown}
      ></textarea>
      <div class="composer-buttons">
        ${
          props.running
            ? html`<button type="button" class="danger" disabled=${busy} onClick=${stop}>
                Stop
              </button>`
            : null
        }
        <button type="submit" disabled=${busy}>${props.running ? "Steer" : "Send"}</button>
      </div>
    </form>
  `;
}
