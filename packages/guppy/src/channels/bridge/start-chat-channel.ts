import { createMemoryState } from "@chat-adapter/state-memory";
import type { Adapter } from "chat";
import { Chat } from "chat";
import { type AccessConfig, channelAccessSettings } from "../../access/access-settings.js";
import { createAccessStore } from "../../access/access-store.js";
import { createAccessControl } from "../../access/create-access-control.js";
import type { ChannelCapabilities, GatewayContext } from "../channel.js";
import { chatChannelInfo } from "../chat-channels.js";
import { secretValues, toChatLogger } from "./chat-logger.js";
import type { ReplySettings } from "./chat-thread-handle.js";
import { type ChatBridge, type ChatBridgeOptions, createChatBridge } from "./create-chat-bridge.js";
import { createPairingNotices, type PairingNotices } from "./pairing-notices.js";
import { createThreadFollows, followingState } from "./thread-follows.js";

export interface RunningChatChannel {
  chat: Chat;
  adapter: Adapter;
  bridge: ChatBridge;
  notices: PairingNotices;
}

/**
 * Builds the Chat SDK instance for one adapter (concurrency "concurrent": Chat SDK never drops or
 * merges a message; the thread's actor owns queuing), wires it to the orchestrator and starts it.
 */
export async function startChatChannel(
  context: GatewayContext<AccessConfig>,
  adapterName: string,
  adapter: Adapter,
  reply: ReplySettings,
  bridgeOptions: Pick<ChatBridgeOptions, "refusedAtShutdown"> = {},
): Promise<RunningChatChannel> {
  const { config, orchestrator, store, logger } = context;
  // What the platform does (its descriptor's capabilities): whether threads are followed.
  const capabilities: ChannelCapabilities = chatChannelInfo(adapterName)?.capabilities ?? {};
  const follows = capabilities.followsThreads
    ? createThreadFollows({
        home: config.home,
        quietMs: config.threadFollowHours * 3_600_000,
        logger,
      })
    : undefined;
  const memory = createMemoryState();
  const chat = new Chat({
    userName: "guppy",
    adapters: { [adapterName]: adapter },
    // Subscriptions in the home (they survive a restart, and lapse when quiet); the rest in memory.
    state: follows ? followingState(memory, follows) : memory,
    concurrency: "concurrent",
    logger: toChatLogger(logger, "chat", secretValues(config)),
  });
  // Bound below: the notices read the owners through this access control.
  let notices: PairingNotices | undefined;
  const access = createAccessControl({
    store: createAccessStore(config.home),
    settings: (channel) => channelAccessSettings(config, channel),
    logger,
    onPairingRequest: (_channel, request) => notices?.requested(request),
  });
  notices = createPairingNotices({
    channel: adapterName,
    chat,
    adapter,
    access,
    reply,
    logger,
    ...(context.say ? { say: context.say } : {}),
  });
  // The upgrade to roles: who was admitted before is an owner, said once on the terminal.
  access.announceOwners(adapterName, (line) => {
    logger.info(`access: ${line}`);
    context.say?.(line);
  });
  const bridge = createChatBridge(chat, {
    adapterName,
    orchestrator,
    access,
    store,
    logger,
    groupReplies: config.groupReplies,
    groupContext: config.groupContext,
    reply,
    ...(follows ? { follows } : {}),
    backfillMessages: config.groupBackfillMessages,
    listsHistory: capabilities.listsHistory ?? false,
    ...bridgeOptions,
  });
  await chat.initialize();
  notices.start();
  return { chat, adapter, bridge, notices };
}

/**
 * Stops a channel started by `startChatChannel`: no new messages come in (the adapter stops
 * polling or closes its socket); once `runsEnded` settles (the orchestrator's drain at shutdown),
 * the replies under way are posted — the answers of the turns the shutdown let finish, a `/new`
 * waiting for the turn the shutdown ends — and then the Chat SDK shuts down, its state with it
 * (nothing can be posted after that). Nothing when it never started.
 */
export async function stopChatChannel(
  running: RunningChatChannel | undefined,
  runsEnded?: Promise<unknown>,
): Promise<void> {
  if (!running) return;
  await running.adapter.disconnect?.();
  const noticesSent = running.notices.stop();
  await Promise.allSettled([runsEnded]);
  await running.bridge.idle();
  await noticesSent;
  await running.chat.shutdown();
}
