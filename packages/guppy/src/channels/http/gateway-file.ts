import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pidAlive, writeFileAtomic } from "@guppy/core/fs";

/**
 * `<home>/gateway.json` (mode 600): where the running `guppy serve` of a home answers, so a
 * `guppy chat` on the same home attaches to it instead of running the thread beside it.
 */
export const GATEWAY_FILE = "gateway.json";

export interface GatewayAddress {
  pid: number;
  /** The HTTP API's base URL as a local client reaches it (`http://127.0.0.1:7420`). */
  url: string;
  /** ISO time the gateway started. */
  started: string;
}

/** The URL a client on this machine uses for a server listening on `address:port`. */
export function localUrl(address: string, port: number): string {
  const host =
    address === "0.0.0.0"
      ? "127.0.0.1"
      : address === "::"
        ? "::1"
        : address.replace(/^::ffff:/, "");
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Writes the file, mode 600 (atomically: a reader never sees half of it). */
export function writeGatewayFile(home: string, url: string): void {
  const address: GatewayAddress = { pid: process.pid, url, started: new Date().toISOString() };
  writeFileAtomic(join(home, GATEWAY_FILE), `${JSON.stringify(address)}\n`, 0o600);
}

/** Removes the file if it is this process's (a clean stop). */
export function removeGatewayFile(home: string): void {
  const path = join(home, GATEWAY_FILE);
  if (readAddress(path)?.pid === process.pid) rmSync(path, { force: true });
}

/** The gateway running on `home`, or undefined: none, or a file left by one that is gone. */
export function readGatewayFile(home: string): GatewayAddress | undefined {
  const address = readAddress(join(home, GATEWAY_FILE));
  return address && pidAlive(address.pid) ? address : undefined;
}

function readAddress(path: string): GatewayAddress | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Partial<GatewayAddress>;
    if (!Number.isInteger(value.pid) || typeof value.url !== "string") return undefined;
    return value as GatewayAddress;
  } catch {
    return undefined;
  }
}
