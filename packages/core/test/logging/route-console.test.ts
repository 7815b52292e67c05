import { describe, expect, it } from "vitest";
import { createLineLogger, routeConsoleTo } from "../../src/logging/logger.js";

describe("routeConsoleTo", () => {
  it("sends what a library prints to the logger, cut to one short line, and puts the console back", () => {
    const lines: string[] = [];
    const logger = createLineLogger({ level: "debug", write: (line) => lines.push(line) });
    const original = console.error;
    const restore = routeConsoleTo(logger, "warn");
    try {
      const chunk = `{"choices": [${"x".repeat(200_000)}END-OF-CHUNK`;
      console.error("Could not parse message into JSON:", chunk);
      console.warn("From chunk:\n", [chunk]);
    } finally {
      restore();
    }
    expect(console.error).toBe(original);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^guppy: warning: a library printed: Could not parse message into JSON: \{"choices/,
    );
    for (const line of lines) {
      expect(line).not.toContain("END-OF-CHUNK");
      expect(line).not.toContain("\n");
      expect(line.length).toBeLessThan(400);
    }
  });
});
