// guppy's files are its owner's alone: conversations, logs, keys and the usage ledger are written
// under umask 077, whatever the user's umask is. The commands the tools run get the user's own
// umask back (see `userUmask`).

let original: number | undefined;

/**
 * Sets this process's umask to 077, once at start, so every file it creates is 600 and every
 * directory 700 — no write path can forget a mode — and keeps the umask it had for `userUmask`.
 * Call it from the main thread only (a worker cannot change the umask).
 */
export function makeFilesPrivate(): void {
  const before = process.umask(0o077);
  original ??= before;
}

/**
 * The umask the user started guppy with, once `makeFilesPrivate` has replaced it; undefined
 * before (then commands simply inherit this process's umask). The shell commands the tools run
 * get it back: what they make (a `git clone`, a build, a file for the user in the workspace they
 * gave with `--workspace`) is the user's work, and a 600 file there would surprise them (a web
 * server that cannot read it, a group that cannot share it). Inside the home those files are
 * still private: the home is 700.
 */
export function userUmask(): number | undefined {
  return original;
}
