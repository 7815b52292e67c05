import { del, get, post, seg } from "./client.js";

// The access routes (docs/channels.md "HTTP API"): a chat channel's pending pairing requests,
// admitted users and invites, and what `guppy pairing` / `guppy invite` do to them.

export type Role = "guest" | "owner";
export const ROLES: readonly Role[] = ["guest", "owner"];

export interface PendingJson {
  user: string;
  name: string | null;
  code: string;
  requested: string;
}

export interface AdmittedJson {
  user: string;
  name?: string;
  role: Role;
  /** approved: by a pairing approval or an invite; allowed_users: by GUPPY_ALLOWED_USERS. */
  source: "approved" | "allowed_users";
}

export interface InviteJson {
  code: string;
  role: Role;
  created: string;
}

export interface AccessJson {
  channel: string;
  policy: string;
  pending: PendingJson[];
  users: AdmittedJson[];
  invites: InviteJson[];
}

const base = (channel: string) => `/v1/access/${seg(channel)}`;

export const channelAccess = (channel: string) => get<AccessJson>(base(channel));
export const approvePairing = (channel: string, code: string, role: Role) =>
  post<{ status: "approved"; user: string; role: Role }>(`${base(channel)}/approve`, {
    code,
    role,
  });
export const denyPairing = (channel: string, code: string) =>
  post<{ status: "denied"; user: string }>(`${base(channel)}/deny`, { code });
export const setRole = (channel: string, user: string, role: Role) =>
  post<{ status: "changed" | "unchanged"; role: Role }>(`${base(channel)}/role`, { user, role });
export const revokeUser = (channel: string, user: string) =>
  post<{ status: "revoked" }>(`${base(channel)}/revoke`, { user });
export const createInvite = (channel: string, role: Role) =>
  post<{ code: string; role: Role }>(`${base(channel)}/invites`, { role });
export const revokeInvite = (channel: string, code: string) =>
  del<{ status: "revoked" }>(`${base(channel)}/invites/${seg(code)}`);
