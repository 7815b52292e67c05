import type { Role } from "@guppy/core";
import { type AccessState, admittedIn } from "./access-state.js";
import type {
  AdmittedUser,
  ApprovedUser,
  RevokeResult,
  SetRoleResult,
  Welcome,
} from "./access-types.js";

/** `1001 (ann)`: a user as lines for the owner name it. */
function describeUser(user: { id: string | number; name?: string }): string {
  return user.name ? `${user.id} (${user.name})` : String(user.id);
}

/** Whether a group message of `userId` not addressed to guppy may be context for its runs. */
export function mayBeContext(state: AccessState, channel: string, userId: string): boolean {
  const { policy } = state.settings(channel);
  if (policy === "disabled") return false;
  return policy === "open" || state.admitted(channel, userId) !== undefined;
}

/** `guppy pairing list`: every admitted user of `channel`, approved ones first. */
export function admittedUsers(state: AccessState, channel: string): AdmittedUser[] {
  const entries = state.store.approved(channel);
  const { allowedUsers } = state.settings(channel);
  const ids = [
    ...entries.filter((u) => u.via !== "allowlist").map((u) => String(u.id)),
    ...allowedUsers,
  ];
  return [...new Set(ids)].flatMap((id) => admittedIn(entries, allowedUsers, id) ?? []);
}

/** `guppy pairing revoke`: takes an approved user out, with their pending request and welcome. */
export function revokeUser(state: AccessState, channel: string, userId: string): RevokeResult {
  const { store } = state;
  // A strict read, as for setRole: guppy never writes over an approved.json it cannot read.
  const entries = store.approved(channel);
  const { allowedUsers } = state.settings(channel);
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
  state.logger.info("access: user revoked", { channel, userId, role: user.role });
  return { kind: "revoked", user };
}

/** Approvals still to be told, for users still admitted; the others' welcomes are removed. */
export function pendingWelcomes(state: AccessState, channel: string): Welcome[] {
  return state.store.welcomes(channel).filter((welcome) => {
    if (state.admitted(channel, welcome.userId)) return true;
    state.store.removeWelcome(channel, welcome.userId);
    return false;
  });
}

/** `guppy pairing role`: sets an admitted user's role. */
export function setRole(
  state: AccessState,
  channel: string,
  userId: string,
  role: Role,
): SetRoleResult {
  // A strict read: guppy never writes over an approved.json it cannot read.
  const entries = state.store.approved(channel);
  const { allowedUsers } = state.settings(channel);
  const user = admittedIn(entries, allowedUsers, userId);
  if (!user) return { kind: "unknown" };
  const entry = entries.find((u) => String(u.id) === userId);
  // Written whenever the file does not say it already: an allowlisted id has no entry (or
  // one with another role), an entry from before roles has no role.
  if (entry?.role !== role) {
    const updated: ApprovedUser = entry
      ? { ...entry, role }
      : { id: userId, approvedAt: state.timestamp(), via: "allowlist", role };
    state.store.saveApproved(channel, [...entries.filter((u) => String(u.id) !== userId), updated]);
    state.logger.info("access: role set", { channel, userId, role, from: user.role });
  }
  return user.role === role
    ? { kind: "unchanged", user }
    : { kind: "changed", user: { ...user, role }, from: user.role };
}

/**
 * At start (the upgrade to roles): the users admitted before roles existed are said to be
 * owners, in one line, and then written down as such.
 */
export function announceOwners(
  state: AccessState,
  channel: string,
  say: (line: string) => void,
): void {
  const entries = state.store.approved(channel);
  const { allowedUsers } = state.settings(channel);
  const legacy = entries.filter(
    (u) => u.role === undefined && (u.via !== "allowlist" || allowedUsers.includes(String(u.id))),
  );
  const recorded = new Set(entries.map((u) => String(u.id)));
  const listed = [...new Set(allowedUsers)].filter((id) => !recorded.has(id));
  if (legacy.length + listed.length === 0) return;
  const names = [...legacy.map(describeUser), ...listed];
  const shown = names.length > 5 ? [...names.slice(0, 5), `${names.length - 5} more`] : names;
  say(
    `${channel}: ${names.length === 1 ? "user" : "users"} ${shown.join(", ")} ${names.length === 1 ? "is an owner" : "are owners"} (admitted before roles existed, or in GUPPY_ALLOWED_USERS); to make one a guest: guppy pairing role ${channel} <user> guest`,
  );
  const at = state.timestamp();
  try {
    state.store.saveApproved(channel, [
      ...entries.map((u): ApprovedUser => (u.role === undefined ? { ...u, role: "owner" } : u)),
      ...listed.map(
        (id): ApprovedUser => ({ id, approvedAt: at, via: "allowlist", role: "owner" }),
      ),
    ]);
  } catch (error) {
    state.logger.warn(`access: could not record the owners of ${channel}: ${String(error)}`, {
      channel,
    });
  }
}
