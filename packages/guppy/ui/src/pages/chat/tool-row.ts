import { html } from "htm/preact";

/** A tool call as a row shows it: live from the events stream, or from the thread's context. */
export interface ToolRowProps {
  name: string;
  args: unknown;
  /** The running tool's last output lines (tool_output), shown until its result comes. */
  output?: string | undefined;
  /** Its result's text; undefined while it runs (or, from the context, when none is stored). */
  result?: string | undefined;
  isError?: boolean;
  /** The result was cut short (the context route's `result_truncated`). */
  truncated?: boolean;
  running?: boolean;
}

/** Characters of the arguments the closed row shows. */
const SUMMARY_CHARS = 80;

/**
 * The closed row's line of the arguments: a call with one string argument (`bash {command}`)
 * shows that string, others their JSON, cut short.
 */
export function argsSummary(args: unknown): string {
  let text: string;
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const values = Object.values(args);
    const only = values.length === 1 ? values[0] : undefined;
    text = typeof only === "string" ? only : JSON.stringify(args);
  } else text = args === undefined ? "" : JSON.stringify(args);
  text = text.replace(/\s+/g, " ").trim();
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text;
}

function argsText(args: unknown): string {
  try {
    return JSON.stringify(args, null, 2) ?? "";
  } catch {
    return String(args);
  }
}

/**
 * One tool call, closed to its name and arguments; opened: the arguments whole, the running
 * tool's output, then its result. All of it text (never markup).
 */
export function ToolRow(props: ToolRowProps) {
  const state = props.running
    ? "running"
    : props.result === undefined
      ? "no-result"
      : props.isError
        ? "error"
        : "ok";
  const badge =
    state === "running" ? "running…" : state === "error" ? "error" : state === "ok" ? "done" : "";
  return html`
    <details class=${`tool-row ${state}`} data-tool-state=${state}>
      <summary>
        <span class="tool-name">${props.name}</span>
        <code class="tool-args">${argsSummary(props.args)}</code>
        ${badge ? html`<span class=${`tool-badge ${state}`}>${badge}</span>` : null}
      </summary>
      <div class="tool-body">
        <div class="tool-label">Arguments</div>
        <pre class="tool-args-full">${argsText(props.args)}</pre>
        ${
          props.running && props.output
            ? html`<div class="tool-label">Output so far</div>
                <pre class="tool-output">${props.output}</pre>`
            : null
        }
        ${
          props.result !== undefined
            ? html`<div class="tool-label">${props.isError ? "Error" : "Result"}</div>
                <pre class=${`tool-result ${props.isError ? "error" : ""}`}>${props.result}${
                  props.truncated ? "\n[…cut short]" : ""
                }</pre>`
            : null
        }
      </div>
    </details>
  `;
}
