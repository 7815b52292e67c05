import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { ConfigError } from "@guppy/core";
import { parseJsoncFile } from "@guppy/core/config";
import type { ApprovedUser, Invite, PendingPairing, Welcome } from "./access-types.js";

/**
 * Access state as plain JSON files under `<GUPPY_HOME>/access/` (documented in docs/channels.md):
 *   <channel>/approved.json   users admitted by pairing approval or invite
 *   <channel>/pending.json    pairing requests waiting for approval (expire after an hour)
 *   <channel>/invites.json    unused one-time invite codes
 *   <channel>/welcome/<user>.json  an approval its user is still to be told of (one file each:
 *                             the CLI writes it, the gateway removes it, neither rewrites the other's)
 *   refusals.jsonl            one line per refused message
 * Every read goes to disk, so `guppy pairing approve` takes effect on a running `guppy serve`.
 * The files may be edited by hand: like settings.json they may hold comments and trailing commas,
 * and one that is still not valid is a ConfigError naming the file, line and column.
 */
export interface AccessStore {
  readonly dir: string;
  approved(channel: string): ApprovedUser[];
  /**
   * approved.json, or when it cannot be read (a hand edit broke it) the list this process read
   * from it last, with the problem; throws when there is none.
   */
  approvedOrLastRead(channel: string): { users: ApprovedUser[]; problem?: Error };
  saveApproved(channel: string, users: readonly ApprovedUser[]): void;
  pending(channel: string): PendingPairing[];
  savePending(channel: string, pending: readonly PendingPairing[]): void;
  invites(channel: string): Invite[];
  saveInvites(channel: string, invites: readonly Invite[]): void;
  /** The approvals still to be told (`<channel>/welcome/`); one that does not read is skipped. */
  welcomes(channel: string): Welcome[];
  saveWelcome(channel: string, welcome: Welcome): void;
  removeWelcome(channel: string, userId: string): void;
  /** The folder of `channel`'s welcome files (the gateway watches it). */
  welcomeDir(channel: string): string;
  logRefusal(entry: Record<string, unknown>): void;
  /** Reads every file of `channel` (at start): the first one that cannot be read is thrown. */
  check(channel: string): void;
}

/** What each access file held when this process (any store) last read it whole. */
const lastRead = new Map<string, unknown[]>();

const WELCOME_DIR = "welcome";

const CHANNEL_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Channel names are path components: short lowercase identifiers (`telegram`, `slack`). */
export function isChannelName(name: string): boolean {
  return CHANNEL_RE.test(name);
}

export function createAccessStore(home: string): AccessStore {
  const dir = join(home, "access");

  const fileOf = (channel: string, name: string): string => {
    if (!isChannelName(channel)) throw new Error(`invalid channel name ${JSON.stringify(channel)}`);
    return join(dir, channel, name);
  };

  const read = <T>(channel: string, name: string): T[] => {
    const file = fileOf(channel, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return [];
      // Node names no path for some ("EISDIR: illegal operation on a directory, read").
      throw new ConfigError(
        code === "EISDIR"
          ? `${file} is a directory, not the file of access state guppy keeps there; move it away`
          : `cannot read ${file}: ${(error as Error).message}`,
      );
    }
    const parsed = parseJsoncFile(file, text) ?? [];
    if (!Array.isArray(parsed)) {
      throw new ConfigError(`${file} must hold a JSON array ([...]), as guppy writes it`);
    }
    lastRead.set(file, parsed);
    return parsed as T[];
  };

  const write = (channel: string, name: string, items: readonly unknown[] | object): void => {
    const file = fileOf(channel, name);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(items, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  };

  // A user id is a file name here: encoded, so no id can name another path.
  const welcomeName = (userId: string) => `${WELCOME_DIR}/${encodeURIComponent(userId)}.json`;

  return {
    dir,
    approved: (channel) => read<ApprovedUser>(channel, "approved.json"),
    approvedOrLastRead(channel) {
      try {
        return { users: read<ApprovedUser>(channel, "approved.json") };
      } catch (error) {
        const kept = lastRead.get(fileOf(channel, "approved.json"));
        if (!kept) throw error;
        return { users: kept as ApprovedUser[], problem: error as Error };
      }
    },
    saveApproved: (channel, users) => write(channel, "approved.json", users),
    pending: (channel) => read<PendingPairing>(channel, "pending.json"),
    savePending: (channel, pending) => write(channel, "pending.json", pending),
    invites: (channel) => read<Invite>(channel, "invites.json"),
    saveInvites: (channel, invites) => write(channel, "invites.json", invites),
    welcomes(channel) {
      const folder = fileOf(channel, WELCOME_DIR);
      let names: string[];
      try {
        names = readdirSync(folder).filter((name) => name.endsWith(".json"));
      } catch {
        return [];
      }
      return names.flatMap((name) => {
        try {
          const welcome = JSON.parse(readFileSync(join(folder, name), "utf8")) as Welcome;
          return typeof welcome?.userId === "string" ? [welcome] : [];
        } catch {
          return [];
        }
      });
    },
    saveWelcome: (channel, welcome) => write(channel, welcomeName(welcome.userId), welcome),
    removeWelcome(channel, userId) {
      rmSync(fileOf(channel, welcomeName(userId)), { force: true });
    },
    welcomeDir: (channel) => fileOf(channel, WELCOME_DIR),
    check(channel) {
      for (const name of ["approved.json", "pending.json", "invites.json"]) read(channel, name);
    },
    logRefusal(entry) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      appendFileSync(join(dir, "refusals.jsonl"), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    },
  };
}
