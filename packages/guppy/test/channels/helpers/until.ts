/** Polls `probe` until it gives a value (returned), or throws after `timeoutMs` naming `what`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
