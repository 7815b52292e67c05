import { Compile } from "typebox/compile";
import { isObject } from "../config/setting-parsers.js";

// An MCP tool's input schema is whatever JSON Schema its server wrote; the providers accept less:
// an object at the top (no anyOf/oneOf there), no `$ref` (several reject them), and `items` on
// every array (OpenAI and Gemini refuse an array without one). One schema they refuse fails
// every request that offers the tool, so each is made acceptable here or its tool left out.

export type SchemaResult =
  | { ok: true; schema: Record<string, unknown> }
  | { ok: false; reason: string };

/** How deep a recursive `$ref` is inlined before the rest is left open (`{}`). */
const MAX_REF_DEPTH = 8;

/**
 * `schema` as the providers accept it: local `$ref`s inlined (`#/$defs/...`, `#/definitions/...`,
 * `#`; recursion is cut after a few levels), a top-level `anyOf`/`oneOf` of objects merged into
 * one object (a property required only where every branch requires it), a top-level `allOf`
 * merged, arrays without `items` given `{}`, and `type: "object"` at the top. A schema that is
 * not an object, refers outside itself, or still does not compile is refused with the reason.
 */
export function normaliseToolSchema(schema: unknown): SchemaResult {
  if (schema === undefined || schema === null) {
    return { ok: true, schema: { type: "object", properties: {} } };
  }
  if (!isObject(schema)) return { ok: false, reason: "the input schema is not an object" };
  try {
    const root = schema;
    const inlined = inline(root, root, 0);
    if (!isObject(inlined)) return { ok: false, reason: "the input schema is not an object" };
    const top = topObject(inlined);
    if (typeof top === "string") return { ok: false, reason: top };
    const fixed = fixArrays(top) as Record<string, unknown>;
    Compile(fixed as Parameters<typeof Compile>[0]);
    return { ok: true, schema: fixed };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

class SchemaProblem extends Error {}

/** `node` with every local `$ref` replaced by what it points at; `$defs` and friends dropped. */
function inline(node: unknown, root: Record<string, unknown>, depth: number): unknown {
  if (Array.isArray(node)) return node.map((item) => inline(item, root, depth));
  if (!isObject(node)) return node;
  if (typeof node.$ref === "string") {
    if (depth >= MAX_REF_DEPTH) return {};
    const target = resolveRef(node.$ref, root);
    const { $ref: _ref, ...siblings } = node;
    const resolved = inline(target, root, depth + 1);
    return isObject(resolved)
      ? { ...resolved, ...(inline(siblings, root, depth) as object) }
      : resolved;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$defs" || key === "definitions" || key === "$schema" || key === "$id") continue;
    // A property may be named like a keyword: only schema-valued places are walked as schemas.
    out[key] =
      key === "properties" && isObject(value)
        ? Object.fromEntries(
            Object.entries(value).map(([name, sub]) => [name, inline(sub, root, depth)]),
          )
        : key === "enum" || key === "const" || key === "default" || key === "examples"
          ? value
          : inline(value, root, depth);
  }
  return out;
}

function resolveRef(ref: string, root: Record<string, unknown>): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) {
    throw new SchemaProblem(`$ref "${ref}" points outside the schema`);
  }
  let at: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(at) || !Object.hasOwn(at, part)) {
      throw new SchemaProblem(`$ref "${ref}" points at nothing`);
    }
    at = at[part];
  }
  return at;
}

/** The schema as one object schema: top-level unions merged, `type: "object"` set. */
function topObject(schema: Record<string, unknown>): Record<string, unknown> | string {
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches)) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    const objects = branches.map((b) => (isObject(b) ? topObject({ ...b }) : "not an object"));
    const bad = objects.find((o) => typeof o === "string");
    if (bad !== undefined || objects.length === 0) {
      return "a top-level anyOf/oneOf has a branch that is not an object";
    }
    const merged = mergeObjects(objects as Record<string, unknown>[], "some");
    return topObject({ ...rest, ...mergeObjects([rest, merged], "all") });
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    const parts = (allOf as unknown[]).map((b) => (isObject(b) ? topObject({ ...b }) : "no"));
    if (parts.some((p) => typeof p === "string")) {
      return "a top-level allOf has a part that is not an object";
    }
    return topObject(mergeObjects([rest, ...(parts as Record<string, unknown>[])], "all"));
  }
  const type = schema.type;
  const types = Array.isArray(type) ? type : type === undefined ? ["object"] : [type];
  if (!types.includes("object")) {
    return `the input schema's type is ${JSON.stringify(type)}, not an object`;
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  return { ...schema, type: "object", properties };
}

/**
 * One object schema from several: their properties together; `required` holds a name every
 * schema requires (`some`: the branches of a union) or any one does (`all`: parts of allOf).
 */
function mergeObjects(
  schemas: Record<string, unknown>[],
  required: "some" | "all",
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const lists = schemas.map((s) => (Array.isArray(s.required) ? (s.required as string[]) : []));
  for (const s of schemas) {
    if (isObject(s.properties)) Object.assign(properties, s.properties);
  }
  const names =
    required === "all"
      ? [...new Set(lists.flat())]
      : (lists[0] ?? []).filter((name) => lists.every((list) => list.includes(name)));
  const merged: Record<string, unknown> = {};
  for (const s of schemas) {
    for (const [key, value] of Object.entries(s)) {
      if (key !== "properties" && key !== "required" && key !== "type") merged[key] = value;
    }
  }
  return {
    ...merged,
    type: "object",
    properties,
    ...(names.length > 0 ? { required: names } : {}),
  };
}

/** Every array schema in `node` with an `items` (`{}` where it had none). */
function fixArrays(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(fixArrays);
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === "properties" && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, fixArrays(sub)]))
        : key === "enum" || key === "const" || key === "default" || key === "examples"
          ? value
          : fixArrays(value);
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes("array") && out.items === undefined && out.prefixItems === undefined) {
    out.items = {};
  }
  return out;
}
