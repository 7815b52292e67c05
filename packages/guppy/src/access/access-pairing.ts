import type { Role } from "@guppy/core";
import { type AccessState, generateCode, MAX_PENDING, normalizeCode } from "./access-state.js";
import type {
  AccessDecision,
  ApprovedUser,
  ChatUser,
  Invite,
  PendingPairing,
} from "./access-types.js";

const pairingReply = (code: string): string =>
  `Pairing code: ${code}\nAsk the owner of this bot to run: guppy pairing approve <channel> ${code}`;

/**
 * Whether `user` may talk to guppy; under `pairing` a stranger in a private chat gets a code
 * (the same live one again, a new one while fewer than MAX_PENDING wait, else nothing).
 */
export function checkUser(
  state: AccessState,
  channel: string,
  user: ChatUser,
  chat: "private" | "group" = "private",
): AccessDecision {
  const { policy } = state.settings(channel);
  if (policy === "disabled") return state.refuse(channel, user, "disabled");
  const known = state.admitted(channel, user.id);
  if (known) return { kind: "allow", role: known.role };
  // Anyone may talk under `open`: as a guest, unless approved or allowlisted as an owner.
  if (policy === "open") return { kind: "allow", role: "guest" };
  if (policy === "allowlist") return state.refuse(channel, user, "not-allowlisted");
  if (chat === "group") {
    state.logRefusal(
      channel,
      user,
      "not-allowlisted",
      "in a group: pairing codes go to private chats",
    );
    return { kind: "refuse", reason: "not-allowlisted" };
  }
  // pairing: the same live code again, a new one while fewer than MAX_PENDING wait, else nothing.
  const pending = state.livePending(channel);
  const mine = pending.find((p) => p.userId === user.id);
  if (mine) {
    state.logRefusal(channel, user, "not-allowlisted", `pairing pending (${mine.code})`);
    return {
      kind: "pair",
      code: mine.code,
      reply: pairingReply(mine.code).replace("<channel>", channel),
    };
  }
  if (pending.length >= MAX_PENDING) return state.refuse(channel, user, "pairing-full");
  const code = generateCode();
  const request: PendingPairing = {
    code,
    userId: user.id,
    ...(user.name ? { userName: user.name } : {}),
    createdAt: state.timestamp(),
  };
  state.store.savePending(channel, [...pending, request]);
  state.logRefusal(channel, user, "not-allowlisted", `pairing code issued (${code})`);
  state.options.onPairingRequest?.(channel, request);
  return { kind: "pair", code, reply: pairingReply(code).replace("<channel>", channel) };
}

/** `/start <code>`: admits the user when `code` is an unused invite; otherwise a refusal. */
export function redeemInvite(
  state: AccessState,
  channel: string,
  user: ChatUser,
  code: string,
): AccessDecision {
  const { policy } = state.settings(channel);
  if (policy === "disabled") return state.refuse(channel, user, "disabled");
  const wanted = normalizeCode(code);
  const invites = state.store.invites(channel);
  const match = invites.find((i) => i.code === wanted);
  if (!match)
    return state.refuse(channel, user, "invalid-invite", "That invite code is not valid.");
  state.store.saveInvites(
    channel,
    invites.filter((i) => i !== match),
  );
  // An invite made before roles existed admits as a guest, like one made now without --owner.
  const role = match.role ?? "guest";
  state.admit(channel, user, "invite", role);
  return { kind: "allow", role };
}

/** `guppy pairing approve`: admits the requester and leaves a welcome for the gateway to tell. */
export function approvePairing(
  state: AccessState,
  channel: string,
  code: string,
  role: Role = "guest",
): ApprovedUser | undefined {
  const wanted = normalizeCode(code);
  const match = state.livePending(channel).find((p) => p.code === wanted);
  if (!match) return undefined;
  const user = state.admit(
    channel,
    { id: match.userId, ...(match.userName ? { name: match.userName } : {}) },
    "pairing",
    role,
  );
  state.store.saveWelcome(channel, {
    userId: user.id,
    ...(user.name ? { userName: user.name } : {}),
    role,
    approvedAt: user.approvedAt,
  });
  return user;
}

/** Drops the live request with `code` (the requester is not told). */
export function denyPairing(
  state: AccessState,
  channel: string,
  code: string,
): PendingPairing | undefined {
  const wanted = normalizeCode(code);
  const pending = state.livePending(channel);
  const match = pending.find((p) => p.code === wanted);
  if (!match) return undefined;
  state.store.savePending(
    channel,
    pending.filter((p) => p !== match),
  );
  state.logger.info("access: pairing request denied", { channel, userId: match.userId });
  return match;
}

/** `guppy invite create`: a one-time code that admits its user as `role`. */
export function createInvite(state: AccessState, channel: string, role: Role = "guest"): string {
  const code = generateCode(10);
  state.store.saveInvites(channel, [
    ...state.store.invites(channel),
    { code, createdAt: state.timestamp(), role },
  ]);
  return code;
}

/** `guppy invite list`: the unused invite codes of `channel`, oldest first, with their role. */
export function listInvites(state: AccessState, channel: string): Array<Invite & { role: Role }> {
  return state.store
    .invites(channel)
    .map((invite) => ({ ...invite, role: invite.role ?? "guest" }));
}

/** `guppy invite revoke`: removes an unused code; the invite removed, or undefined. */
export function revokeInvite(
  state: AccessState,
  channel: string,
  code: string,
): Invite | undefined {
  const wanted = normalizeCode(code);
  const invites = state.store.invites(channel);
  const match = invites.find((i) => i.code === wanted);
  if (!match) return undefined;
  state.store.saveInvites(
    channel,
    invites.filter((i) => i !== match),
  );
  state.logger.info("access: invite revoked", { channel, code: match.code });
  return match;
}
