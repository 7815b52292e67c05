import type { Role } from "@guppy/core";
import type { AdmittedVia } from "@guppy/core/state";

// The records access keeps are state (core's state/types.ts); the decisions' vocabulary is here.
export type {
  AdmittedVia,
  ApprovedUser,
  Invite,
  PendingPairing,
  Welcome,
} from "@guppy/core/state";

/** Who may talk to guppy on a chat channel (docs/channels.md, Access control). */
export const accessPolicies = ["pairing", "allowlist", "open", "disabled"] as const;
export type AccessPolicy = (typeof accessPolicies)[number];

/** When guppy answers in group chats: only when mentioned or replied to, or to every message. */
export const groupReplyModes = ["mention", "all"] as const;
export type GroupReplies = (typeof groupReplyModes)[number];

/** Whose conversation a group message is: the group's (shared) or its sender's own (per-user). */
export const groupContexts = ["shared", "per-user"] as const;
export type GroupContext = (typeof groupContexts)[number];

/** A chat user as the access layer sees it: platform user id plus a display name for logs. */
export interface ChatUser {
  id: string;
  name?: string;
}

/** What the access layer decided for one incoming message. */
export type AccessDecision =
  /** Admitted, as `role`: what its prompts and steers carry to the run (its tool set). */
  | { kind: "allow"; role: Role }
  /** Unknown user under `pairing`: `reply` holds the code and is the only thing sent. */
  | { kind: "pair"; code: string; reply: string }
  /** Refused; `reply` is sent when present (silence otherwise), the refusal is logged either way. */
  | { kind: "refuse"; reason: RefusalReason; reply?: string };

export type RefusalReason =
  | "disabled"
  | "not-allowlisted"
  | "pairing-full"
  | "invalid-invite"
  | "group-not-addressed";

/** An admitted user as `guppy pairing list` shows it: its role and how it got in. */
export interface AdmittedUser {
  id: string;
  name?: string;
  role: Role;
  via: AdmittedVia;
}

/** What `revoke` did: `allowlisted` when GUPPY_ALLOWED_USERS admits the user (nothing changed). */
export type RevokeResult =
  | { kind: "revoked"; user: AdmittedUser }
  | { kind: "allowlisted"; user: AdmittedUser }
  | { kind: "unknown" };

/** What `setRole` did: `unknown` when the user is neither approved nor allowlisted there. */
export type SetRoleResult =
  | { kind: "changed"; user: AdmittedUser; from: Role }
  | { kind: "unchanged"; user: AdmittedUser }
  | { kind: "unknown" };

/** Per-channel access settings, resolved from the global policy and the channel's override. */
export interface ChannelAccessSettings {
  policy: AccessPolicy;
  allowedUsers: readonly string[];
}

/** What the HTTP API's access routes ask (`/v1/access/{channel}`…, docs/channels.md). */
export type AccessAction =
  | "list"
  | "approve"
  | "deny"
  | "role"
  | "revoke"
  | "create-invite"
  | "revoke-invite";

/**
 * One access route's request as it crosses to the main thread: the channel and code of the path
 * as given, the JSON body unchecked (checked in access-admin.ts, next to the CLI's checks and messages).
 */
export interface AccessRequest {
  action: AccessAction;
  channel: string;
  /** DELETE …/invites/{code}. */
  code?: string;
  body?: Record<string, unknown>;
}

/** A route's answer: its JSON (`status` 200 or 201), or an error with the CLI's message. */
export type AccessAnswer =
  | { ok: true; status: 200 | 201; body: Record<string, unknown> }
  | { ok: false; status: 400 | 404 | 409; message: string; type: string };
