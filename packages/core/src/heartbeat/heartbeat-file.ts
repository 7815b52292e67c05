import { join } from "node:path";
import { NoFollowError, readTextNoFollow } from "../fs/no-follow.js";
import { HEARTBEAT_OK } from "../runner/quiet-run.js";

/** The owner's standing checklist, read at every beat: `<home>/HEARTBEAT.md`. */
export const HEARTBEAT_FILE = "HEARTBEAT.md";

/**
 * Whether HEARTBEAT.md asks for anything. Comments (`<!-- … -->`, an unclosed one to the end),
 * Markdown headings, blank lines and bare list markers (`-`, `- [ ]`) ask for nothing: a file of
 * only those (a template) makes no model request.
 */
export function isActionable(text: string): boolean {
  const uncommented = text.replace(/<!--[\s\S]*?(-->|$)/g, "");
  return uncommented.split(/\r?\n/).some((raw) => {
    const line = raw.trim();
    if (line === "") return false;
    if (/^#{1,6}(\s|$)/.test(line)) return false;
    return !/^([-*+]|\d+[.)])(\s+\[[ xX]?\])?$/.test(line);
  });
}

/**
 * HEARTBEAT.md's text when it asks for something; undefined when it is missing, unreadable or
 * holds nothing actionable. A symlink there (a tool could have made one) is refused, never
 * followed, and `refused` is told why.
 */
export function readHeartbeatFile(
  home: string,
  refused?: (line: string) => void,
): string | undefined {
  let text: string;
  try {
    text = readTextNoFollow(home, join(home, HEARTBEAT_FILE));
  } catch (error) {
    if (error instanceof NoFollowError) refused?.(`refused ${error.message}`);
    return undefined;
  }
  return isActionable(text) ? text.trim() : undefined;
}

/** The beat's prompt: the file's text, and how to say that nothing needs the user. */
export function heartbeatPrompt(content: string): string {
  return [
    `This is a heartbeat: a scheduled check guppy runs on its own, not a message from the user. Go through the checklist from ${HEARTBEAT_FILE} below and do what it asks now.`,
    `If nothing needs the user's attention, answer exactly ${HEARTBEAT_OK} and nothing else: that answer is not delivered and leaves no trace. Otherwise answer with what the user should know; it is delivered to them.`,
    "",
    `${HEARTBEAT_FILE}:`,
    content,
  ].join("\n");
}
