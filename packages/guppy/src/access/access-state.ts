import { randomInt } from "node:crypto";
import type { Logger, Role } from "@guppy/core";
import type { AccessStore } from "./access-store.js";
import type {
  AccessDecision,
  AdmittedUser,
  ApprovedUser,
  ChannelAccessSettings,
  ChatUser,
  PendingPairing,
  RefusalReason,
} from "./access-types.js";

/** How long a pairing request (its code) stays live. */
export const PAIRING_TTL_MS = 60 * 60 * 1000;
/** The most pairing requests that wait at once on a channel: the next stranger gets no code. */
export const MAX_PENDING = 3;

export interface AccessControlOptions {
  store: AccessStore;
  settings(channel: string): ChannelAccessSettings;
  logger: Logger;
  now?: () => number;
  /**
   * A new pairing request (a code issued, not the same code given again): the gateway shows it
   * on its terminal and sends it to the channel's owners. Called after the request is saved.
   */
  onPairingRequest?: (channel: string, request: PendingPairing) => void;
}

/**
 * What access control of one home keeps: its access files (every read goes to disk), its clock
 * and the approved.json problems it has logged. The decisions (access-pairing.ts) and the owner's
 * changes to users (access-users.ts) are plain functions over it.
 */
export class AccessState {
  readonly store: AccessStore;
  readonly logger: Logger;
  readonly now: () => number;
  readonly options: AccessControlOptions;
  /** The approved.json problem last logged per channel (see `approvedUsers`). */
  private readonly reported = new Map<string, string>();

  constructor(options: AccessControlOptions) {
    this.options = options;
    this.store = options.store;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  settings(channel: string): ChannelAccessSettings {
    return this.options.settings(channel);
  }

  /** The time now, as the access files write it. */
  timestamp(): string {
    return new Date(this.now()).toISOString();
  }

  /** The pairing requests of `channel` that have not expired; expired ones are dropped. */
  livePending(channel: string): PendingPairing[] {
    const all = this.store.pending(channel);
    const live = all.filter((p) => this.now() - Date.parse(p.createdAt) < PAIRING_TTL_MS);
    if (live.length !== all.length) this.store.savePending(channel, live);
    return live;
  }

  /**
   * approved.json as read. A hand edit that breaks it must not lock every approved user out: the
   * list read last keeps answering, and the problem is logged as an error (again when it changes).
   */
  approvedUsers(channel: string): ApprovedUser[] {
    const { users, problem } = this.store.approvedOrLastRead(channel);
    if (!problem) this.reported.delete(channel);
    else if (this.reported.get(channel) !== problem.message) {
      this.reported.set(channel, problem.message);
      this.logger.error(`access: ${problem.message}; the approved users read before still count`, {
        channel,
      });
    }
    return users;
  }

  /** The user admitted on `channel` and its role, or undefined; read without side effects. */
  admitted(channel: string, userId: string): AdmittedUser | undefined {
    return admittedIn(this.approvedUsers(channel), this.settings(channel).allowedUsers, userId);
  }

  /** Writes `user` down as approved (and drops their pending request). */
  admit(channel: string, user: ChatUser, via: ApprovedUser["via"], role: Role): ApprovedUser {
    const { store } = this;
    const approved = store.approved(channel).filter((u) => String(u.id) !== user.id);
    const entry: ApprovedUser = {
      id: user.id,
      ...(user.name ? { name: user.name } : {}),
      approvedAt: this.timestamp(),
      via,
      role,
    };
    store.saveApproved(channel, [...approved, entry]);
    store.savePending(
      channel,
      store.pending(channel).filter((p) => p.userId !== user.id),
    );
    this.logger.info("access: user admitted", { channel, userId: user.id, via, role });
    return entry;
  }

  /** Logs a refused message, to the log and to refusals.jsonl. */
  logRefusal(channel: string, user: ChatUser, reason: RefusalReason, detail?: string): void {
    const entry = {
      time: this.timestamp(),
      channel,
      userId: user.id,
      ...(user.name ? { userName: user.name } : {}),
      reason,
      ...(detail ? { detail } : {}),
    };
    this.logger.info("access: message refused", entry);
    try {
      this.store.logRefusal(entry);
    } catch (error) {
      this.logger.warn("access: could not write the refusal log", { error: String(error) });
    }
  }

  /** A refusal, logged. */
  refuse(channel: string, user: ChatUser, reason: RefusalReason, reply?: string): AccessDecision {
    this.logRefusal(channel, user, reason);
    return reply === undefined ? { kind: "refuse", reason } : { kind: "refuse", reason, reply };
  }
}

/** The role of an approved.json entry: none recorded means admitted before roles, an owner. */
export const roleOfEntry = (entry: ApprovedUser): Role => entry.role ?? "owner";

/**
 * An approved entry admits its user; an entry `via: "allowlist"` only records the role of an
 * id in GUPPY_ALLOWED_USERS (out of the list, out of guppy). `entries`: approved.json as read.
 */
export function admittedIn(
  entries: readonly ApprovedUser[],
  allowedUsers: readonly string[],
  userId: string,
): AdmittedUser | undefined {
  // String(): a hand-written Telegram id is often a number (`"id": 1001`).
  const entry = entries.find((u) => String(u.id) === userId);
  const name = entry?.name ? { name: entry.name } : {};
  if (entry && entry.via !== "allowlist") {
    return { id: userId, ...name, role: roleOfEntry(entry), via: entry.via };
  }
  if (allowedUsers.includes(userId)) {
    return { id: userId, ...name, role: entry ? roleOfEntry(entry) : "owner", via: "allowlist" };
  }
  return undefined;
}

/** Letters and digits that cannot be confused with each other when read aloud or typed. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A short random code (pairing requests and invites): `length` characters from ALPHABET. */
export function generateCode(length = 8): string {
  let code = "";
  for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** Codes are compared case-insensitively and without surrounding spaces or dashes. */
export function normalizeCode(code: string): string {
  return code.trim().replace(/[-\s]/g, "").toUpperCase();
}
