/** The error message of a 429: the thread has as many prompts waiting as it may. */
export function busyMessage(threadId: string, queued: number): string {
  const waiting = queued === 1 ? "1 prompt" : `${queued} prompts`;
  return `Thread ${threadId} is busy (${waiting} queued); try again shortly.`;
}
