import { randomInt } from "node:crypto";
import type { Logger } from "@guppy/core";
import type { AccessStore } from "./access-store.js";
import type {
  AccessDecision,
  ApprovedUser,
  ChannelAccessSettings,
  ChatUser,
  PendingPairing,
  RefusalReason,
} from "./access-types.js";

export const PAIRING_TTL_MS = 60 * 60 * 1000;
export const MAX_PENDING = 3;

export interface AccessControlOptions {
  store: AccessStore;
  settings(channel: string): ChannelAccessSettings;
  logger: Logger;
  now?: () => number;
}

/** Decisions taken before any LLM call: who may talk to guppy on a chat channel. */
export interface AccessControl {
  /**
   * Whether `user` may talk to guppy. In a group chat (`chat`: "group") an unknown user is
   * refused in silence under `pairing` too: pairing codes are only ever sent in private chats
   * (in a group they would be posted for all to see, and use up the pending slots).
   */
  check(channel: string, user: ChatUser, chat?: "private" | "group"): AccessDecision;
  /** `/start <code>`: admits the user when `code` is an unused invite; otherwise a refusal. */
  redeemInvite(channel: string, user: ChatUser, code: string): AccessDecision;
  /** Logs a refusal decided elsewhere (group message not addressed to the bot). */
  logRefusal(channel: string, user: ChatUser, reason: RefusalReason, detail?: string): void;
  /** `guppy pairing approve`: the approved user, or undefined when no live request has that code. */
  approvePairing(channel: string, code: string): ApprovedUser | undefined;
  pendingPairings(channel: string): PendingPairing[];
  createInvite(channel: string): string;
  isApproved(channel: string, userId: string): boolean;
}

// Long by design: one closure per home whose methods share the access files as read.
export function createAccessControl(options: AccessControlOptions): AccessControl {
  const { store, logger } = options;
  const now = options.now ?? Date.now;

  const livePending = (channel: string): PendingPairing[] => {
    const all = store.pending(channel);
    const live = all.filter((p) => now() - Date.parse(p.createdAt) < PAIRING_TTL_MS);
    if (live.length !== all.length) store.savePending(channel, live);
    return live;
  };

  // A hand edit that breaks approved.json must not lock every approved user out: the list read
  // last keeps answering, and the problem is logged as an error (again when it changes).
  const reported = new Map<string, string>();
  const approvedUsers = (channel: string): ApprovedUser[] => {
    const { users, problem } = store.approvedOrLastRead(channel);
    if (!problem) reported.delete(channel);
    else if (reported.get(channel) !== problem.message) {
      reported.set(channel, problem.message);
      logger.error(`access: ${problem.message}; the approved users read before still count`, {
        channel,
      });
    }
    return users;
  };

  const isApproved = (channel: string, userId: string): boolean =>
    // String(): a hand-written Telegram id is often a number (`"id": 1001`).
    approvedUsers(channel).some((u) => String(u.id) === userId);

  const admit = (channel: string, user: ChatUser, via: ApprovedUser["via"]): ApprovedUser => {
    const approved = store.approved(channel).filter((u) => String(u.id) !== user.id);
    const entry: ApprovedUser = {
      id: user.id,
      ...(user.name ? { name: user.name } : {}),
      approvedAt: new Date(now()).toISOString(),
      via,
    };
    store.saveApproved(channel, [...approved, entry]);
    store.savePending(
      channel,
      store.pending(channel).filter((p) => p.userId !== user.id),
    );
    logger.info("access: user admitted", { channel, userId: user.id, via });
    return entry;
  };

  const logRefusal = (
    channel: string,
    user: ChatUser,
    reason: RefusalReason,
    detail?: string,
  ): void => {
    const entry = {
      time: new Date(now()).toISOString(),
      channel,
      userId: user.id,
      ...(user.name ? { userName: user.name } : {}),
      reason,
      ...(detail ? { detail } : {}),
    };
    logger.info("access: message refused", entry);
    try {
      store.logRefusal(entry);
    } catch (error) {
      logger.warn("access: could not write the refusal log", { error: String(error) });
    }
  };

  const refuse = (
    channel: string,
    user: ChatUser,
    reason: RefusalReason,
    reply?: string,
  ): AccessDecision => {
    logRefusal(channel, user, reason);
    return reply === undefined ? { kind: "refuse", reason } : { kind: "refuse", reason, reply };
  };

  const pairingReply = (code: string): string =>
    `Pairing code: ${code}\nAsk the owner of this bot to run: guppy pairing approve <channel> ${code}`;

  return {
    isApproved,
    logRefusal,
    check(channel, user, chat = "private") {
      const { policy, allowedUsers } = options.settings(channel);
      if (policy === "disabled") return refuse(channel, user, "disabled");
      if (policy === "open") return { kind: "allow" };
      if (allowedUsers.includes(user.id) || isApproved(channel, user.id)) return { kind: "allow" };
      if (policy === "allowlist") return refuse(channel, user, "not-allowlisted");
      if (chat === "group") {
        logRefusal(
          channel,
          user,
          "not-allowlisted",
          "in a group: pairing codes go to private chats",
        );
        return { kind: "refuse", reason: "not-allowlisted" };
      }
      // pairing: the same live code again, a new one while fewer than MAX_PENDING wait, else nothing.
      const pending = livePending(channel);
      const mine = pending.find((p) => p.userId === user.id);
      if (mine) {
        logRefusal(channel, user, "not-allowlisted", `pairing pending (${mine.code})`);
        return {
          kind: "pair",
          code: mine.code,
          reply: pairingReply(mine.code).replace("<channel>", channel),
        };
      }
      if (pending.length >= MAX_PENDING) return refuse(channel, user, "pairing-full");
      const code = generateCode();
      store.savePending(channel, [
        ...pending,
        {
          code,
          userId: user.id,
          ...(user.name ? { userName: user.name } : {}),
          createdAt: new Date(now()).toISOString(),
        },
      ]);
      logRefusal(channel, user, "not-allowlisted", `pairing code issued (${code})`);
      return { kind: "pair", code, reply: pairingReply(code).replace("<channel>", channel) };
    },
    redeemInvite(channel, user, code) {
      const { policy } = options.settings(channel);
      if (policy === "disabled") return refuse(channel, user, "disabled");
      const wanted = normalizeCode(code);
      const invites = store.invites(channel);
      const match = invites.find((i) => i.code === wanted);
      if (!match) return refuse(channel, user, "invalid-invite", "That invite code is not valid.");
      store.saveInvites(
        channel,
        invites.filter((i) => i !== match),
      );
      admit(channel, user, "invite");
      return { kind: "allow" };
    },
    approvePairing(channel, code) {
      const wanted = normalizeCode(code);
      const match = livePending(channel).find((p) => p.code === wanted);
      if (!match) return undefined;
      return admit(
        channel,
        { id: match.userId, ...(match.userName ? { name: match.userName } : {}) },
        "pairing",
      );
    },
    pendingPairings: (channel) => livePending(channel),
    createInvite(channel) {
      const code = generateCode(10);
      store.saveInvites(channel, [
        ...store.invites(channel),
        { code, createdAt: new Date(now()).toISOString() },
      ]);
      return code;
    },
  };
}

/** Letters and digits that cannot be confused with each other when read aloud or typed. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A short random code (pairing requests and invites): `length` characters from ALPHABET. */
function generateCode(length = 8): string {
  let code = "";
  for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** Codes are compared case-insensitively and without surrounding spaces or dashes. */
function normalizeCode(code: string): string {
  return code.trim().replace(/[-\s]/g, "").toUpperCase();
}
