import { writeSync } from "node:fs";
import { setWriteSync, type WriteSync } from "../../src/fs/write.js";

/**
 * A disk that fills up, for the store's writes (see `setWriteSync`): once `free` is set, writes
 * take only that many more bytes — the write that crosses it is cut short, as write(2) does on a
 * nearly full disk, and the ones after fail with ENOSPC. `free` undefined: room for everything.
 * `chunk`: no write takes more than that many bytes (a short write with room left). `writes`
 * counts the write calls. `restore()` puts the real write back.
 */
export function fakeFullDisk() {
  const disk = {
    free: undefined as number | undefined,
    chunk: undefined as number | undefined,
    writes: 0,
  };
  const real: WriteSync = (fd, data, position) =>
    typeof data === "string"
      ? writeSync(fd, data, position, "utf8")
      : writeSync(fd, data, 0, data.byteLength, position);
  const old = setWriteSync((fd, data, position) => {
    disk.writes++;
    if (disk.free === 0) {
      const error: NodeJS.ErrnoException = new Error("ENOSPC: no space left on device, write");
      error.code = "ENOSPC";
      error.errno = -28;
      error.syscall = "write";
      throw error;
    }
    const room = Math.min(
      disk.free ?? Number.POSITIVE_INFINITY,
      disk.chunk ?? Number.POSITIVE_INFINITY,
    );
    if (room === Number.POSITIVE_INFINITY) return real(fd, data, position);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const n = real(fd, bytes.subarray(0, Math.min(bytes.byteLength, room)), position);
    if (disk.free !== undefined) disk.free -= n;
    return n;
  });
  return Object.assign(disk, { restore: () => setWriteSync(old) });
}
