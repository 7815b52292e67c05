import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A throwaway GUPPY_HOME with a helper to write files under it. */
export function tempHome() {
  const home = mkdtempSync(join(tmpdir(), "guppy-mem-"));
  return {
    home,
    /** Writes `<home>/<relative>` (creating folders) and returns its path. */
    write(relative: string, content: string): string {
      const path = join(home, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content, "utf8");
      return path;
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}
