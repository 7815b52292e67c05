import type { Logger, Role } from "@guppy/core";
import type { AppConfig } from "../channels/registry.js";
import {
  accessChannel,
  accessRoles,
  admittedByAllowlist,
  noAdmittedUser,
  noPendingRequest,
  noUnusedInvite,
  unconfiguredChannel,
  unknownChannel,
  unknownRole,
} from "./access-messages.js";
import { channelAccessSettings } from "./access-settings.js";
import { createAccessStore } from "./access-store.js";
import type { AccessAnswer, AccessRequest } from "./access-types.js";
import { createAccessControl } from "./create-access-control.js";

const fail = (status: 400 | 404 | 409, message: string, type: string): AccessAnswer => ({
  ok: false,
  status,
  message,
  type,
});
const badField = (message: string) => fail(400, message, "invalid_request_error");
const ok = (body: Record<string, unknown>, status: 200 | 201 = 200): AccessAnswer => ({
  ok: true,
  status,
  body,
});

/** A non-empty string field of the body, or the 400 naming it. */
function stringField(body: Record<string, unknown>, name: string): string | AccessAnswer {
  const value = body[name];
  return typeof value === "string" && value.trim() !== ""
    ? value.trim()
    : badField(`\`${name}\` must be a non-empty string.`);
}

/** The body's `role`: `fallback` when absent (undefined: required), or the 400 naming it. */
function roleField(body: Record<string, unknown>, fallback?: Role): Role | AccessAnswer {
  const value = body.role;
  if (value === undefined && fallback) return fallback;
  if (typeof value !== "string") return badField("`role` must be owner or guest.");
  if (!accessRoles.includes(value as Role)) return badField(`\`role\`: ${unknownRole(value)}`);
  return value as Role;
}

/**
 * The gateway's side of the access routes: the same access files and checks as `guppy pairing`
 * and `guppy invite` (create-access-control.ts), so an approval writes the welcome the running
 * chat channel posts to the user, and a revoke is read by the next check of their message.
 */
export function createAccessAdmin(config: AppConfig, logger: Logger) {
  const access = createAccessControl({
    store: createAccessStore(config.home),
    settings: (channel) => channelAccessSettings(config, channel),
    logger,
  });
  return (request: AccessRequest): AccessAnswer => {
    const channel = accessChannel(request.channel);
    if (!channel) return fail(404, unknownChannel(request.channel), "not_found");
    const body = request.body ?? {};
    switch (request.action) {
      case "list": {
        const { policy } = channelAccessSettings(config, channel);
        return ok({
          channel,
          policy,
          pending: access.pendingPairings(channel).map((p) => ({
            user: p.userId,
            name: p.userName ?? null,
            code: p.code,
            requested: p.createdAt,
          })),
          users: access.admittedUsers(channel).map((u) => ({
            user: u.id,
            ...(u.name ? { name: u.name } : {}),
            role: u.role,
            source: u.via === "allowlist" ? "allowed_users" : "approved",
          })),
          invites: access
            .invites(channel)
            .map((i) => ({ code: i.code, role: i.role, created: i.createdAt })),
        });
      }
      case "approve": {
        const code = stringField(body, "code");
        if (typeof code !== "string") return code;
        const role = roleField(body, "guest");
        if (typeof role !== "string") return role;
        const user = access.approvePairing(channel, code, role);
        if (!user) return fail(404, noPendingRequest(channel, code), "not_found");
        return ok({
          status: "approved",
          channel,
          user: user.id,
          ...(user.name ? { name: user.name } : {}),
          role,
        });
      }
      case "deny": {
        const code = stringField(body, "code");
        if (typeof code !== "string") return code;
        const denied = access.denyPairing(channel, code);
        if (!denied) return fail(404, noPendingRequest(channel, code), "not_found");
        return ok({ status: "denied", channel, user: denied.userId, code: denied.code });
      }
      case "role": {
        const user = stringField(body, "user");
        if (typeof user !== "string") return user;
        const role = roleField(body);
        if (typeof role !== "string") return role;
        const result = access.setRole(channel, user, role);
        if (result.kind === "unknown") {
          return fail(404, noAdmittedUser(channel, user), "not_found");
        }
        return ok({
          status: result.kind,
          channel,
          user,
          role,
          ...(result.kind === "changed" ? { from: result.from } : {}),
        });
      }
      case "revoke": {
        const user = stringField(body, "user");
        if (typeof user !== "string") return user;
        const result = access.revoke(channel, user);
        if (result.kind === "unknown") {
          return fail(404, noAdmittedUser(channel, user), "not_found");
        }
        if (result.kind === "allowlisted") {
          return fail(409, admittedByAllowlist(config, result.user), "allowlisted");
        }
        return ok({ status: "revoked", channel, user, role: result.user.role });
      }
      case "create-invite": {
        const role = roleField(body, "guest");
        if (typeof role !== "string") return role;
        const unconfigured = unconfiguredChannel(config, channel);
        if (unconfigured) return fail(409, unconfigured, "not_configured");
        return ok({ code: access.createInvite(channel, role), role }, 201);
      }
      case "revoke-invite": {
        const code = request.code ?? "";
        const revoked = access.revokeInvite(channel, code);
        if (!revoked) return fail(404, noUnusedInvite(channel, code), "not_found");
        return ok({ status: "revoked", channel, code: revoked.code });
      }
    }
  };
}
