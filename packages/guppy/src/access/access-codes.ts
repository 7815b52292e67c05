import { randomInt } from "node:crypto";

/** Letters and digits that cannot be confused with each other when read aloud or typed. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A short random code (pairing requests and invites): `length` characters from ALPHABET. */
export function generateCode(length = 8): string {
  let code = "";
  for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** Codes are compared case-insensitively and without surrounding spaces or dashes. */
export function normalizeCode(code: string): string {
  return code.trim().replace(/[-\s]/g, "").toUpperCase();
}
