import { writeSync } from "node:fs";
import { setWriteSync, type WriteSync } from "../../src/store/write-fully.js";

/**
 * A disk that fills up, for the store's writes (see `setWriteSync`): once `free` is set, writes
 * take only that many more bytes — the write that crosses it is cut short, as write(2) does on a
 * nearly full disk, and the ones after fail with ENOSPC. `free` undefined: room for everything.
 * `restore()` puts the real write back.
 */
export function fakeFullDisk() {
  const disk = { free: undefined as number | undefined, writes: 0 };
  const real: WriteSync = (fd, data, position) =>
    typeof data === "string"
      ? writeSync(fd, data, position, "utf8")
      : writeSync(fd, data, 0, data.byteLength, position);
  const old = setWriteSync((fd, data, position) => {
    disk.writes++;
    if (disk.free === undefined) return real(fd, data, position);
    if (disk.free === 0) {
      const error: NodeJS.ErrnoException = new Error("ENOSPC: no space left on device, write");
      error.code = "ENOSPC";
      error.errno = -28;
      error.syscall = "write";
      throw error;
    }
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const n = real(fd, bytes.subarray(0, Math.min(bytes.byteLength, disk.free)), position);
    disk.free -= n;
    return n;
  });
  return Object.assign(disk, { restore: () => setWriteSync(old) });
}
