import { randomInt } from "node:crypto";
import type { Logger, Role } from "@guppy/core";
import type { AccessStore } from "./access-store.js";
import type {
  AccessDecision,
  AdmittedUser,
  ApprovedUser,
  ChannelAccessSettings,
  ChatUser,
  Invite,
  PendingPairing,
  RefusalReason,
  RevokeResult,
  Welcome,
} from "./access-types.js";

export const PAIRING_TTL_MS = 60 * 60 * 1000;
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
  /**
   * `guppy pairing approve`: admits the requester as `role` (guest unless `--owner`) and leaves
   * a welcome for the gateway to tell them (`welcomes`); the approved user, or undefined when no
   * live request has that code.
   */
  approvePairing(channel: string, code: string, role?: Role): ApprovedUser | undefined;
  pendingPairings(channel: string): PendingPairing[];
  /**
   * Deny of the HTTP API's access routes: drops the live request with `code` (the requester is
   * not told; a later message of theirs asks again); the request dropped, or undefined.
   */
  denyPairing(channel: string, code: string): PendingPairing | undefined;
  /** `guppy invite create`: a one-time code that admits its user as `role` (default guest). */
  createInvite(channel: string, role?: Role): string;
  /** `guppy invite list`: the unused invite codes of `channel`, oldest first, with their role. */
  invites(channel: string): Array<Invite & { role: Role }>;
  /** `guppy invite revoke`: removes an unused code; the invite removed, or undefined. */
  revokeInvite(channel: string, code: string): Invite | undefined;
  /**
   * `guppy pairing revoke`: takes an approved user out (and their pending request and untold
   * welcome); every check reads the file, so a running gateway refuses their next message.
   * A user GUPPY_ALLOWED_USERS admits is left as is (`allowlisted`): only the setting can.
   */
  revoke(channel: string, userId: string): RevokeResult;
  /**
   * Approvals still to be told to their users, for users still admitted; a welcome whose user
   * is no longer admitted (revoked meanwhile) is removed. `welcomed` removes one once told.
   */
  welcomes(channel: string): Welcome[];
  welcomed(channel: string, userId: string): void;
  /** The folder the welcomes of `channel` are files in (the gateway watches it). */
  welcomeDir(channel: string): string;
  /**
   * The user admitted on `channel` (approved, or in GUPPY_ALLOWED_USERS) and its role, or
   * undefined; read without side effects (no pairing code, nothing logged). Under `open` a
   * user who is not admitted is still answered, as a guest: that is `check`'s business.
   */
  admitted(channel: string, userId: string): AdmittedUser | undefined;
  /**
   * Whether a group message of `userId` that is not addressed to guppy may be context for its
   * runs (written to the thread's log, backfilled): the user is admitted, or the channel's policy
   * is `open`; never under `disabled`. A stranger's words could carry instructions into an
   * owner's run, so they are never context. Read without side effects.
   */
  mayBeContext(channel: string, userId: string): boolean;
  /** `guppy pairing list`: every admitted user of `channel`, approved ones first. */
  admittedUsers(channel: string): AdmittedUser[];
  /** `guppy pairing role`: sets an admitted user's role (see SetRoleResult). */
  setRole(channel: string, userId: string, role: Role): SetRoleResult;
  /**
   * At start (the upgrade to roles): users admitted before roles existed — approved.json entries
   * with no `role`, ids in GUPPY_ALLOWED_USERS with no entry — are owners, so nothing they could
   * do stops working. When there are any, `say` gets one line naming them and how to make one a
   * guest, and then each gets `role: "owner"` written down (an allowlisted id an entry `via:
   * "allowlist"`): the next start has nothing to say. An id added to GUPPY_ALLOWED_USERS later
   * is said once in the same way. A write that fails is logged; the line comes again next start.
   */
  announceOwners(channel: string, say: (line: string) => void): void;
}

/** What `setRole` did: `unknown` when the user is neither approved nor allowlisted there. */
export type SetRoleResult =
  | { kind: "changed"; user: AdmittedUser; from: Role }
  | { kind: "unchanged"; user: AdmittedUser }
  | { kind: "unknown" };

/** The role of an approved.json entry: none recorded means admitted before roles, an owner. */
const roleOfEntry = (entry: ApprovedUser): Role => entry.role ?? "owner";

/** `1001 (ann)`: a user as lines for the owner name it. */
function describeUser(user: { id: string | number; name?: string }): string {
  return user.name ? `${user.id} (${user.name})` : String(user.id);
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

  /**
   * An approved entry admits its user; an entry `via: "allowlist"` only records the role of an
   * id in GUPPY_ALLOWED_USERS (out of the list, out of guppy). `entries`: approved.json as read.
   */
  const admittedIn = (
    entries: readonly ApprovedUser[],
    allowedUsers: readonly string[],
    userId: string,
  ): AdmittedUser | undefined => {
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
  };

  const admitted = (channel: string, userId: string): AdmittedUser | undefined =>
    admittedIn(approvedUsers(channel), options.settings(channel).allowedUsers, userId);

  const admit = (
    channel: string,
    user: ChatUser,
    via: ApprovedUser["via"],
    role: Role,
  ): ApprovedUser => {
    const approved = store.approved(channel).filter((u) => String(u.id) !== user.id);
    const entry: ApprovedUser = {
      id: user.id,
      ...(user.name ? { name: user.name } : {}),
      approvedAt: new Date(now()).toISOString(),
      via,
      role,
    };
    store.saveApproved(channel, [...approved, entry]);
    store.savePending(
      channel,
      store.pending(channel).filter((p) => p.userId !== user.id),
    );
    logger.info("access: user admitted", { channel, userId: user.id, via, role });
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
    admitted,
    logRefusal,
    mayBeContext(channel, userId) {
      const { policy } = options.settings(channel);
      if (policy === "disabled") return false;
      return policy === "open" || admitted(channel, userId) !== undefined;
    },
    check(channel, user, chat = "private") {
      const { policy } = options.settings(channel);
      if (policy === "disabled") return refuse(channel, user, "disabled");
      const known = admitted(channel, user.id);
      if (known) return { kind: "allow", role: known.role };
      // Anyone may talk under `open`: as a guest, unless approved or allowlisted as an owner.
      if (policy === "open") return { kind: "allow", role: "guest" };
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
      const request: PendingPairing = {
        code,
        userId: user.id,
        ...(user.name ? { userName: user.name } : {}),
        createdAt: new Date(now()).toISOString(),
      };
      store.savePending(channel, [...pending, request]);
      logRefusal(channel, user, "not-allowlisted", `pairing code issued (${code})`);
      options.onPairingRequest?.(channel, request);
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
      // An invite made before roles existed admits as a guest, like one made now without --owner.
      const role = match.role ?? "guest";
      admit(channel, user, "invite", role);
      return { kind: "allow", role };
    },
    approvePairing(channel, code, role = "guest") {
      const wanted = normalizeCode(code);
      const match = livePending(channel).find((p) => p.code === wanted);
      if (!match) return undefined;
      const user = admit(
        channel,
        { id: match.userId, ...(match.userName ? { name: match.userName } : {}) },
        "pairing",
        role,
      );
      store.saveWelcome(channel, {
        userId: user.id,
        ...(user.name ? { userName: user.name } : {}),
        role,
        approvedAt: user.approvedAt,
      });
      return user;
    },
    pendingPairings: (channel) => livePending(channel),
    denyPairing(channel, code) {
      const wanted = normalizeCode(code);
      const pending = livePending(channel);
      const match = pending.find((p) => p.code === wanted);
      if (!match) return undefined;
      store.savePending(
        channel,
        pending.filter((p) => p !== match),
      );
      logger.info("access: pairing request denied", { channel, userId: match.userId });
      return match;
    },
    createInvite(channel, role = "guest") {
      const code = generateCode(10);
      store.saveInvites(channel, [
        ...store.invites(channel),
        { code, createdAt: new Date(now()).toISOString(), role },
      ]);
      return code;
    },
    invites: (channel) =>
      store.invites(channel).map((invite) => ({ ...invite, role: invite.role ?? "guest" })),
    revokeInvite(channel, code) {
      const wanted = normalizeCode(code);
      const invites = store.invites(channel);
      const match = invites.find((i) => i.code === wanted);
      if (!match) return undefined;
      store.saveInvites(
        channel,
        invites.filter((i) => i !== match),
      );
      logger.info("access: invite revoked", { channel, code: match.code });
      return match;
    },
    revoke(channel, userId) {
      // A strict read, as for setRole: guppy never writes over an approved.json it cannot read.
      const entries = store.approved(channel);
      const { allowedUsers } = options.settings(channel);
      const user = admittedIn(entries, allowedUsers, userId);
      if (!user) return { kind: "unknown" };
      if (allowedUsers.includes(userId)) return { kind: "allowlisted", user };
      store.saveApproved(
        channel,
        entries.filter((u) => String(u.id) !== userId),
      );
      const pending = store.pending(channel);
      if (pending.some((p) => p.userId === userId)) {
        store.savePending(
          channel,
          pending.filter((p) => p.userId !== userId),
        );
      }
      store.removeWelcome(channel, userId);
      logger.info("access: user revoked", { channel, userId, role: user.role });
      return { kind: "revoked", user };
    },
    welcomes(channel) {
      return store.welcomes(channel).filter((welcome) => {
        if (admitted(channel, welcome.userId)) return true;
        store.removeWelcome(channel, welcome.userId);
        return false;
      });
    },
    welcomed: (channel, userId) => store.removeWelcome(channel, userId),
    welcomeDir: (channel) => store.welcomeDir(channel),
    admittedUsers(channel) {
      const entries = store.approved(channel);
      const { allowedUsers } = options.settings(channel);
      const ids = [
        ...entries.filter((u) => u.via !== "allowlist").map((u) => String(u.id)),
        ...allowedUsers,
      ];
      return [...new Set(ids)].flatMap((id) => admittedIn(entries, allowedUsers, id) ?? []);
    },
    setRole(channel, userId, role) {
      // A strict read: guppy never writes over an approved.json it cannot read.
      const entries = store.approved(channel);
      const { allowedUsers } = options.settings(channel);
      const user = admittedIn(entries, allowedUsers, userId);
      if (!user) return { kind: "unknown" };
      const entry = entries.find((u) => String(u.id) === userId);
      // Written whenever the file does not say it already: an allowlisted id has no entry (or
      // one with another role), an entry from before roles has no role.
      if (entry?.role !== role) {
        const updated: ApprovedUser = entry
          ? { ...entry, role }
          : { id: userId, approvedAt: new Date(now()).toISOString(), via: "allowlist", role };
        store.saveApproved(channel, [...entries.filter((u) => String(u.id) !== userId), updated]);
        logger.info("access: role set", { channel, userId, role, from: user.role });
      }
      return user.role === role
        ? { kind: "unchanged", user }
        : { kind: "changed", user: { ...user, role }, from: user.role };
    },
    announceOwners(channel, say) {
      const entries = store.approved(channel);
      const { allowedUsers } = options.settings(channel);
      const legacy = entries.filter(
        (u) =>
          u.role === undefined && (u.via !== "allowlist" || allowedUsers.includes(String(u.id))),
      );
      const recorded = new Set(entries.map((u) => String(u.id)));
      const listed = [...new Set(allowedUsers)].filter((id) => !recorded.has(id));
      if (legacy.length + listed.length === 0) return;
      const names = [...legacy.map(describeUser), ...listed];
      const shown = names.length > 5 ? [...names.slice(0, 5), `${names.length - 5} more`] : names;
      say(
        `${channel}: ${names.length === 1 ? "user" : "users"} ${shown.join(", ")} ${names.length === 1 ? "is an owner" : "are owners"} (admitted before roles existed, or in GUPPY_ALLOWED_USERS); to make one a guest: guppy pairing role ${channel} <user> guest`,
      );
      const at = new Date(now()).toISOString();
      try {
        store.saveApproved(channel, [
          ...entries.map((u): ApprovedUser => (u.role === undefined ? { ...u, role: "owner" } : u)),
          ...listed.map(
            (id): ApprovedUser => ({ id, approvedAt: at, via: "allowlist", role: "owner" }),
          ),
        ]);
      } catch (error) {
        logger.warn(`access: could not record the owners of ${channel}: ${String(error)}`, {
          channel,
        });
      }
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
