import { type FSWatcher, mkdirSync, watch } from "node:fs";
import type { Logger } from "@guppy/core";
import type { Adapter, Chat, Thread } from "chat";
import type { PendingPairing } from "../../access/access-types.js";
import type { AccessControl } from "../../access/create-access-control.js";
import { helpText } from "./chat-commands.js";
import { postSplit, type ReplySettings } from "./chat-thread-handle.js";

export interface PairingNoticesOptions {
  /** The adapter name: the access channel whose requests and approvals these are. */
  channel: string;
  chat: Chat;
  adapter: Adapter;
  access: AccessControl;
  reply: ReplySettings;
  logger: Logger;
  /** A readable line on the gateway's terminal. */
  say?: (line: string) => void;
  /** How often the welcome folder is read when it cannot be watched (tests: shorter). */
  pollMs?: number;
}

/**
 * What the gateway tells people about pairing, so that nobody has to look for it: a new request
 * is a line on its terminal and a private message to each owner of the channel, with the command
 * that approves it; an approval made with `guppy pairing approve` (another process, which can
 * only write a file) is a message to the approved user, sent as soon as the welcome file appears
 * or, when the gateway was not running, at its next start.
 */
export interface PairingNotices {
  requested(request: PendingPairing): void;
  /** Tells the approvals made while the gateway was down, then watches for new ones. */
  start(): void;
  /** Stops watching; resolves once the messages under way are sent. */
  stop(): Promise<void>;
}

/** `eve (6666)`: a requester as the owner reads it. */
function who(request: PendingPairing): string {
  return request.userName ? `${request.userName} (${request.userId})` : request.userId;
}

export function createPairingNotices(options: PairingNoticesOptions): PairingNotices {
  const { channel, chat, adapter, access, reply, logger } = options;
  const pending = new Set<Promise<unknown>>();
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const track = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => {});
  };

  /** A private message to `userId` (Telegram: the user id is the private chat's id). */
  const dm = async (userId: string, text: string): Promise<void> => {
    if (!adapter.openDM) throw new Error(`${channel} cannot open a private chat`);
    const threadId = await adapter.openDM(userId);
    await postSplit(chat.thread(threadId) as Thread, text, reply);
  };

  // One delivery at a time: a change seen while one runs asks for one more run after it.
  let delivering: Promise<void> | undefined;
  let again = false;
  const deliverWelcomes = (): void => {
    if (stopped) return;
    if (delivering) {
      again = true;
      return;
    }
    delivering = (async () => {
      do {
        again = false;
        let welcomes: ReturnType<AccessControl["welcomes"]>;
        try {
          welcomes = access.welcomes(channel);
        } catch (error) {
          logger.warn(`access: could not read the approvals to tell on ${channel}`, {
            error: String(error),
          });
          return;
        }
        for (const welcome of welcomes) {
          if (stopped) return;
          const role =
            welcome.role === "owner"
              ? "as an owner"
              : "as a guest (some tools are the owner's alone)";
          try {
            await dm(
              welcome.userId,
              `Your pairing request was approved ${role}: you can talk to me now.\n\n${helpText()}`,
            );
            access.welcomed(channel, welcome.userId);
            logger.info("access: approved user told", { channel, userId: welcome.userId });
          } catch (error) {
            // Kept: tried again at the next approval or start.
            logger.warn(
              `access: could not tell ${welcome.userId} on ${channel} of their approval`,
              {
                error: String(error),
              },
            );
          }
        }
      } while (again && !stopped);
    })().finally(() => {
      delivering = undefined;
    });
    track(delivering);
  };

  // A rename into the folder is several events: one delivery after they settle.
  let debounce: NodeJS.Timeout | undefined;
  const changed = () => {
    clearTimeout(debounce);
    debounce = setTimeout(deliverWelcomes, 50);
  };

  return {
    requested(request) {
      const approve = `guppy pairing approve ${channel} ${request.code}`;
      const line = `pairing: ${who(request)} asks to talk to guppy on ${channel}, code ${request.code}; to let them in: ${approve} (--owner for every tool)`;
      logger.info(`access: ${line}`, { channel, userId: request.userId, code: request.code });
      options.say?.(line);
      let owners: string[];
      try {
        owners = access
          .admittedUsers(channel)
          .filter((user) => user.role === "owner")
          .map((user) => user.id);
      } catch (error) {
        logger.warn(`access: could not read the owners of ${channel}`, { error: String(error) });
        return;
      }
      const text = `Pairing request on ${channel} from ${who(request)}: code ${request.code}. To let them in, run:\n\n\`${approve}\`\n\n(add --owner for every tool; the code expires in an hour)`;
      for (const owner of owners) {
        track(
          dm(owner, text).catch((error: unknown) =>
            logger.warn(
              `access: could not tell owner ${owner} of a pairing request on ${channel}`,
              {
                error: String(error),
              },
            ),
          ),
        );
      }
    },
    start() {
      const dir = access.welcomeDir(channel);
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        watcher = watch(dir, changed);
        // The gateway's own handles keep it running; the folder gone (a test's home) is no error.
        watcher.unref();
        watcher.on("error", () => {});
      } catch (error) {
        // Some file systems cannot be watched: the folder is read now and then instead.
        logger.info(`access: cannot watch ${dir} (${String(error)}); reading it every few seconds`);
        timer = setInterval(deliverWelcomes, options.pollMs ?? 5_000);
        timer.unref();
      }
      deliverWelcomes();
    },
    async stop() {
      stopped = true;
      watcher?.close();
      clearTimeout(debounce);
      clearInterval(timer);
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
