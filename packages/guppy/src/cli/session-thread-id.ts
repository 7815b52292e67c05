import { UsageError } from "./cli-error.js";

/**
 * The terminal's thread for `--session NAME` (default "default"): `cli:local:<NAME>`. The name is
 * 1-64 letters, digits, ".", "_" or "-"; anything else is a usage error.
 */
export function sessionThreadId(session: string | undefined): string {
  const name = session ?? "default";
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    throw new UsageError(`invalid --session "${name}": use 1-64 letters, digits, ".", "_" or "-".`);
  }
  return `cli:local:${name}`;
}
