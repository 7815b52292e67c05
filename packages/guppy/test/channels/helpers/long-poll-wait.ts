/**
 * A long poll's wait, as getUpdates does it: until one of `waiters` is called (an update
 * arrived), the client goes away, or `timeoutMs` passes. Shared by the test Bot APIs.
 */
export function longPollWait(
  waiters: Set<() => void>,
  res: { on(event: "close", listener: () => void): unknown },
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    waiters.add(done);
    res.on("close", done);
  });
}
