import { join } from "node:path";
import { encodeSegment, parseThreadId } from "../store/thread-layout.js";

/** The three levels memory and skills live at, broadest first. */
export const scopes = ["global", "transport", "channel"] as const;
export type Scope = (typeof scopes)[number];

export interface ScopeDir {
  scope: Scope;
  /** Host directory of the level: `<home>`, `<home>/<adapter>`, `<home>/<adapter>/<channel>`. */
  dir: string;
  /** How the prompt and `guppy skills` name the level, e.g. `transport (telegram)`. */
  label: string;
}

/** The global, transport and channel directories a thread sees (same layout and encoding as the store). */
export function scopeDirs(home: string, threadId: string): ScopeDir[] {
  const ref = parseThreadId(threadId);
  return [
    { scope: "global", dir: home, label: "global" },
    { scope: "transport", dir: join(home, ref.adapter), label: `transport (${ref.adapter})` },
    {
      scope: "channel",
      dir: join(home, ref.adapter, encodeSegment(ref.channel)),
      label: `channel (${ref.adapter}:${ref.channel})`,
    },
  ];
}
