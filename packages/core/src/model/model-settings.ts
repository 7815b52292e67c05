import {
  integerValue,
  isObject,
  modelRefValue,
  numberValue,
  oneOf,
  type ParseResult,
  type Parser,
  tokenValue,
  urlValue,
} from "../config/setting-parsers.js";
import {
  MIN_CONTEXT_WINDOW,
  type SettingDefinitions,
  type SettingValues,
  wireApis,
} from "../config/settings-schema.js";

/** Prices of a model in dollars per million tokens (settings.json `modelCost`). */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** The model's settings: which model, where, with what key, limits and prices. */
export const modelSettings = {
  model: {
    env: "GUPPY_MODEL",
    parse: modelRefValue,
    description: "Model as provider/model-id (pi-ai catalog), e.g. anthropic/claude-sonnet-4-5",
  },
  baseUrl: {
    env: "GUPPY_BASE_URL",
    parse: urlValue,
    description: "Custom endpoint base URL (Ollama, LM Studio, vLLM, a proxy)",
  },
  api: {
    env: "GUPPY_API",
    parse: oneOf(wireApis),
    description: "Wire protocol of the custom endpoint",
  },
  apiKey: {
    env: "GUPPY_API_KEY",
    parse: tokenValue,
    secret: true,
    description: "API key; overrides the provider's own variable (ANTHROPIC_API_KEY, ...)",
  },
  maxTokens: {
    env: "GUPPY_MAX_TOKENS",
    parse: integerValue(1),
    description:
      "Tokens reserved for each reply, at most half the context window (default: the model catalog's limit, capped)",
  },
  contextWindow: {
    env: "GUPPY_CONTEXT_WINDOW",
    // guppy's system prompt and tools take ~1,000 tokens; with the reply at most half the window
    // and the 256-token safety margin, 4096 leaves a request ≥ 1,792 tokens — 1024 left none.
    parse: integerValue(MIN_CONTEXT_WINDOW),
    description: `Context window in tokens, at least ${MIN_CONTEXT_WINDOW} (default: the model catalog's)`,
  },
  temperature: {
    env: "GUPPY_TEMPERATURE",
    parse: numberValue(0, 2),
    description:
      "Sampling temperature sent with every request (default: unset, the provider's own)",
  },
  modelCost: {
    parse: modelCostValue(),
    description:
      'Prices of the model in dollars per million tokens, for a custom endpoint or to override the catalog\'s: `{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}` (cache prices default to 0)',
  },
} satisfies SettingDefinitions;

export type ModelSettingValues = SettingValues<typeof modelSettings>;

/** settings.json `modelCost`: input and output prices (cache prices optional), each ≥ 0. */
function modelCostValue(): Parser<ModelCost> {
  const expected =
    'an object of prices per million tokens, {"input": N, "output": N, "cacheRead": N, "cacheWrite": N}';
  const parse = (raw: unknown): ParseResult<ModelCost> => {
    if (!isObject(raw)) return { ok: false, expected };
    const fields = ["input", "output", "cacheRead", "cacheWrite"] as const;
    for (const key of Object.keys(raw)) {
      if (!(fields as readonly string[]).includes(key)) {
        return {
          ok: false,
          expected,
          problem: `modelCost: unknown field "${key}" (fields: ${fields.join(", ")})`,
        };
      }
    }
    const cost: ModelCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    for (const field of fields) {
      const v = raw[field];
      if (v === undefined && (field === "cacheRead" || field === "cacheWrite")) continue;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        return {
          ok: false,
          expected,
          problem: `modelCost.${field} must be a number ≥ 0 (dollars per million tokens)`,
        };
      }
      cost[field] = v;
    }
    return { ok: true, value: cost };
  };
  return Object.assign(parse, { expected });
}
