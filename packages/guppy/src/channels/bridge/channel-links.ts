import type { ChannelLink, ThreadHandle } from "@guppy/core";
import { parseThreadId } from "@guppy/core";

/**
 * The chat channels running in this process, by adapter name: lets a thread's `upload` tool find
 * the channel its thread lives on (`telegram:...` → the Telegram link).
 */
const links = new Map<string, ChannelLink>();

export function registerChannelLink(link: ChannelLink): void {
  links.set(link.adapterId, link);
}

export function unregisterChannelLink(link: ChannelLink): void {
  if (links.get(link.adapterId) === link) links.delete(link.adapterId);
}

/** A handle for posting to `threadId` on its chat channel, or undefined if none runs here. */
export function channelThreadHandle(threadId: string): ThreadHandle | undefined {
  try {
    return links.get(parseThreadId(threadId).adapter)?.threadHandle(threadId);
  } catch {
    return undefined;
  }
}
