import { describe, expect, it } from "vitest";
import { normaliseToolSchema } from "../../src/mcp/mcp-schema.js";

function fixed(schema: unknown): Record<string, unknown> {
  const result = normaliseToolSchema(schema);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result.schema;
}

describe("MCP input schema normalisation", () => {
  it("inlines local $refs and drops $defs, definitions and $schema", () => {
    const schema = fixed({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        point: { $ref: "#/$defs/Point", description: "where" },
        other: { $ref: "#/definitions/Name" },
      },
      $defs: { Point: { type: "object", properties: { x: { type: "number" } } } },
      definitions: { Name: { type: "string" } },
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        point: { type: "object", properties: { x: { type: "number" } }, description: "where" },
        other: { type: "string" },
      },
    });
    expect(JSON.stringify(schema)).not.toContain("$ref");
  });

  it("cuts a recursive $ref after a few levels instead of looping", () => {
    const schema = fixed({
      type: "object",
      properties: { node: { $ref: "#/$defs/Node" } },
      $defs: {
        Node: { type: "object", properties: { child: { $ref: "#/$defs/Node" } } },
      },
    });
    expect(JSON.stringify(schema)).not.toContain("$ref");
    expect(JSON.stringify(schema)).toContain('"child"');
  });

  it("merges a top-level anyOf/oneOf of objects into one object", () => {
    const schema = fixed({
      type: "object",
      anyOf: [
        { type: "object", properties: { id: { type: "string" }, a: {} }, required: ["id", "a"] },
        { properties: { id: { type: "string" }, b: { type: "number" } }, required: ["id"] },
      ],
    });
    expect(schema.type).toBe("object");
    expect(schema.anyOf).toBeUndefined();
    expect(Object.keys(schema.properties as object).sort()).toEqual(["a", "b", "id"]);
    expect(schema.required).toEqual(["id"]);
    const one = fixed({ oneOf: [{ type: "object", properties: { q: { type: "string" } } }] });
    expect(one).toEqual({ type: "object", properties: { q: { type: "string" } } });
  });

  it("gives every array without items an empty items schema, however deep", () => {
    const schema = fixed({
      type: "object",
      properties: {
        tags: { type: "array" },
        nested: { type: "object", properties: { list: { type: ["array", "null"] } } },
        typed: { type: "array", items: { type: "string" } },
        // A property named like a keyword is a property, not a schema keyword.
        items: { type: "array" },
      },
    });
    const props = schema.properties as Record<string, Record<string, unknown>>;
    expect(props.tags).toEqual({ type: "array", items: {} });
    expect((props.nested?.properties as Record<string, unknown> | undefined)?.list).toEqual({
      type: ["array", "null"],
      items: {},
    });
    expect(props.typed).toEqual({ type: "array", items: { type: "string" } });
    expect(props.items).toEqual({ type: "array", items: {} });
  });

  it("puts type object at the top (a missing schema is an empty object)", () => {
    expect(fixed({ properties: { a: { type: "string" } } })).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
    });
    expect(fixed(undefined)).toEqual({ type: "object", properties: {} });
    expect(fixed({ type: ["object", "null"] }).type).toBe("object");
  });

  it("refuses what cannot be made an object schema, saying why", () => {
    const cases: [unknown, string][] = [
      [{ type: "string" }, "not an object"],
      ["nope", "not an object"],
      [{ type: "object", properties: { a: { $ref: "https://example.com/a.json" } } }, "outside"],
      [{ type: "object", properties: { a: { $ref: "#/$defs/Missing" } } }, "points at nothing"],
      [{ anyOf: [{ type: "object" }, { type: "string" }] }, "anyOf/oneOf"],
    ];
    for (const [schema, reason] of cases) {
      const result = normaliseToolSchema(schema);
      expect(result.ok, JSON.stringify(schema)).toBe(false);
      if (!result.ok) expect(result.reason).toContain(reason);
    }
  });
});
