import type { Context, Hono } from "hono";
import type { AccessAction } from "../../access/access-types.js";
import type { HttpBackend } from "./http-backend.js";
import { jsonError } from "./json-error.js";
import { readJsonBody } from "./request-body.js";

/** POST /v1/access/{channel}/{action}: each takes a JSON body. */
const postActions: ReadonlyArray<[path: string, action: AccessAction]> = [
  ["approve", "approve"],
  ["deny", "deny"],
  ["role", "role"],
  ["revoke", "revoke"],
  ["invites", "create-invite"],
];

/**
 * The access routes (issue 38 item 7; docs/channels.md): a chat channel's pending pairing
 * requests, admitted users and invites, and what `guppy pairing`/`guppy invite` do to them. The
 * checks and the answers are the gateway's (access-admin.ts): the route only carries them.
 */
export function addAccessRoutes(app: Hono, backend: HttpBackend): void {
  const answer = async (
    c: Context,
    action: AccessAction,
    extra: { code?: string; body?: Record<string, unknown> } = {},
  ): Promise<Response> => {
    const result = await backend.access({
      action,
      channel: c.req.param("channel") ?? "",
      ...extra,
    });
    if (!result) return jsonError(c, 501, "This gateway has no access control.", "not_implemented");
    if (!result.ok) return jsonError(c, result.status, result.message, result.type);
    return c.json(result.body, result.status);
  };
  app.get("/v1/access/:channel", (c) => answer(c, "list"));
  for (const [path, action] of postActions) {
    app.post(`/v1/access/:channel/${path}`, async (c) => {
      // An invite may come without a body (a guest's).
      const parsed = await readJsonBody(c, { optional: action === "create-invite" });
      if (!parsed.ok) return parsed.response;
      return answer(c, action, { body: parsed.body });
    });
  }
  app.delete("/v1/access/:channel/invites/:code", (c) =>
    answer(c, "revoke-invite", { code: c.req.param("code") ?? "" }),
  );
}
