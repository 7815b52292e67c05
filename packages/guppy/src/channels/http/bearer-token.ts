import { timingSafeEqual } from "node:crypto";

/**
 * Constant-time comparison of an `Authorization` header with the token. The scheme name is
 * case-insensitive (RFC 7235: `Bearer`, `bearer` and `BEARER` are one scheme).
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header || !/^bearer /i.test(header)) return false;
  const given = Buffer.from(header.slice(7).trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
