import type { Role } from "@guppy/core";
import {
  approvePairing,
  checkUser,
  createInvite,
  denyPairing,
  listInvites,
  redeemInvite,
  revokeInvite,
} from "./access-pairing.js";
import { type AccessControlOptions, AccessState } from "./access-state.js";
import type {
  AccessDecision,
  AdmittedUser,
  ApprovedUser,
  ChatUser,
  Invite,
  PendingPairing,
  RefusalReason,
  RevokeResult,
  SetRoleResult,
  Welcome,
} from "./access-types.js";
import {
  admittedUsers,
  announceOwners,
  mayBeContext,
  pendingWelcomes,
  revokeUser,
  setRole,
} from "./access-users.js";

export { type AccessControlOptions, MAX_PENDING, PAIRING_TTL_MS } from "./access-state.js";
export type { SetRoleResult } from "./access-types.js";

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

/**
 * Access control over one home's access files. The state is an `AccessState`; the decisions and
 * invites are in access-pairing.ts, the owner's changes to users in access-users.ts.
 */
export function createAccessControl(options: AccessControlOptions): AccessControl {
  const state = new AccessState(options);
  return {
    check: (channel, user, chat) => checkUser(state, channel, user, chat),
    redeemInvite: (channel, user, code) => redeemInvite(state, channel, user, code),
    logRefusal: (channel, user, reason, detail) => state.logRefusal(channel, user, reason, detail),
    approvePairing: (channel, code, role) => approvePairing(state, channel, code, role),
    pendingPairings: (channel) => state.livePending(channel),
    denyPairing: (channel, code) => denyPairing(state, channel, code),
    createInvite: (channel, role) => createInvite(state, channel, role),
    invites: (channel) => listInvites(state, channel),
    revokeInvite: (channel, code) => revokeInvite(state, channel, code),
    revoke: (channel, userId) => revokeUser(state, channel, userId),
    welcomes: (channel) => pendingWelcomes(state, channel),
    welcomed: (channel, userId) => state.store.removeWelcome(channel, userId),
    welcomeDir: (channel) => state.store.welcomeDir(channel),
    admitted: (channel, userId) => state.admitted(channel, userId),
    mayBeContext: (channel, userId) => mayBeContext(state, channel, userId),
    admittedUsers: (channel) => admittedUsers(state, channel),
    setRole: (channel, userId, role) => setRole(state, channel, userId, role),
    announceOwners: (channel, say) => announceOwners(state, channel, say),
  };
}
