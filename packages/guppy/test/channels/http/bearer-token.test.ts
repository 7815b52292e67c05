import { describe, expect, it } from "vitest";
import { bearerMatches } from "../../../src/channels/http/bearer-token.js";

const token = "0123456789abcdef-token";

describe("bearerMatches", () => {
  it("takes the scheme name in any case (RFC 7235)", () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      expect(bearerMatches(`${scheme} ${token}`, token)).toBe(true);
    }
    expect(bearerMatches(`Bearer   ${token}  `, token)).toBe(true);
  });

  it("refuses another scheme, a wrong or missing token", () => {
    for (const header of [
      undefined,
      "",
      token,
      `Basic ${token}`,
      `Bearer${token}`,
      `bearer ${token}x`,
      `Bearer ${token.slice(1)}`,
      "Bearer ",
    ]) {
      expect(bearerMatches(header, token)).toBe(false);
    }
  });
});
