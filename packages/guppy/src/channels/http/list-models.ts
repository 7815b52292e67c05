import type { Context } from "hono";
import { jsonError } from "./json-error.js";

/**
 * GET /v1/models and GET /v1/models/{id}, in OpenAI's shape: chat UIs (Open WebUI, LibreChat,
 * the `openai` clients' `models.list()`) list the models first and offer only those. The gateway
 * has one model, the configured `provider/model-id`; that id is what they then send as `model`,
 * and POST /v1/chat/completions takes it (as it takes any `model`: the configured one answers).
 */
export interface ModelEntry {
  id: string;
  object: "model";
  /** Unix seconds: when this gateway started (the catalog has no date for a model). */
  created: number;
  owned_by: "guppy";
}

export function modelEntry(modelName: string, created: number): ModelEntry {
  return { id: modelName, object: "model", created, owned_by: "guppy" };
}

/** The routes' handlers over the configured model, `created` fixed at the gateway's start. */
export function createModelRoutes(modelName: string) {
  const entry = modelEntry(modelName, Math.floor(Date.now() / 1000));
  return {
    list: (c: Context) => c.json({ object: "list", data: [entry] }),
    /** `id` may hold slashes (`openai/gpt-4o`): the route takes the rest of the path. */
    retrieve: (c: Context) => {
      const id = c.req.param("id");
      if (id === entry.id) return c.json(entry);
      return jsonError(
        c,
        404,
        `No model ${JSON.stringify(id)}: this gateway answers with ${JSON.stringify(entry.id)}.`,
        "not_found",
      );
    },
  };
}
