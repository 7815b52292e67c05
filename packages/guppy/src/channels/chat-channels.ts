import type { ChannelInfo } from "./channel.js";
import { info as discord } from "./discord/info.js";
import { info as slack } from "./slack/info.js";
import { info as telegram } from "./telegram/info.js";

/**
 * The chat channels' names, labels and capabilities, without their descriptors: a descriptor
 * loads its channel's code, which loads the chat bridge, so the bridge reads them here.
 */
const chatChannels: readonly ChannelInfo[] = [telegram, slack, discord];

/** The chat channel named `name`, or undefined (a name guppy has no chat channel for). */
export function chatChannelInfo(name: string): ChannelInfo | undefined {
  return chatChannels.find((channel) => channel.name === name);
}
