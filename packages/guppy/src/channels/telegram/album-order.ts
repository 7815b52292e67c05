/**
 * Keeps a Telegram thread's messages behind the albums sent before them. The adapter holds an
 * album's parts for about a second (twice in polling mode: its polling loop, then the step that
 * combines them into one message), while any other message goes on at once, so a text sent right
 * after photos ("what is in these photos?") was run first, without them. Album parts are noted
 * as soon as they are fetched; a message of the same thread sent after an album's first part is
 * held until every part of that album has been handled (the combined message is in the bridge),
 * and so is a message sent after a held one. Other threads never wait, nor does a message sent
 * before the album.
 */
export interface AlbumOrder {
  /** An album part seen (fetched, or handed to the adapter); the same update again changes nothing. */
  notePart(updateId: number, thread: string, album: string, messageId: number): void;
  /** The adapter's handling of a noted part: the part is done when it settles (a failure is logged). */
  handling(updateId: number, task: Promise<unknown>): void;
  /**
   * Holds the message `messageId` of `thread` when an album of the thread begun before it is
   * still being collected, or an earlier message of the thread is still held: then `deliver`
   * runs once those are handed over, and this returns true. False: nothing to wait for, deliver
   * it now (`deliver` is not called). A message waiting for an album that `release` gives up on,
   * or for a message that waited for one, is never delivered: it goes after that album, at the
   * next start.
   */
  hold(thread: string, messageId: number, deliver: () => Promise<void>): boolean;
  /**
   * Once polling has stopped: waits for the albums being handled and the messages held behind
   * them, and gives up the albums the adapter had not begun to handle (they will not come in this
   * process), with the messages held behind them; resolves once that is all settled.
   */
  release(): Promise<void>;
}

export interface AlbumOrderLogger {
  warn(message: string): void;
}

export interface AlbumOrderOptions {
  /** How long a message waits at most for an album part the adapter never handles. */
  timeoutMs?: number;
  /**
   * Every part of an album was handled (the combined message was handed over, or combining it
   * failed): their update ids. Not called for an album a part of which was never handled.
   */
  handedOver?: (updateIds: number[]) => void;
}

/** How long a message waits at most for an album part the adapter never handles. */
export const ALBUM_PART_TIMEOUT_MS = 10_000;

interface Album {
  key: string;
  thread: string;
  /** The message id of its first part: messages with a higher one were sent after it. */
  firstId: number;
  updateIds: number[];
  /** Its parts not yet handled. */
  open: number;
  /** A part was given up by `release`: the album comes again at the next start. */
  givenUp: boolean;
  /**
   * The messages held behind it may go on: every part was handled, or one was not within the
   * timeout (the album still counts as handed over once its late parts are handled).
   */
  released: boolean;
  /** True unless `release` gave it up. */
  done: Promise<boolean>;
  resolve: (handedOver: boolean) => void;
}

interface Part {
  album: Album;
  timer: NodeJS.Timeout;
  task?: Promise<void>;
}

export function createAlbumOrder(
  logger: AlbumOrderLogger,
  options: AlbumOrderOptions = {},
): AlbumOrder {
  const timeoutMs = options.timeoutMs ?? ALBUM_PART_TIMEOUT_MS;
  const parts = new Map<number, Part>();
  const albums = new Map<string, Album>();
  /** Per thread, the delivery of its last held message: true once it went on. */
  const lastHeld = new Map<string, Promise<boolean>>();
  const delivering = new Set<Promise<boolean>>();

  /** Lets the messages held behind `album` go on; new ones no longer wait for it. */
  const releaseWaiters = (album: Album, went: boolean) => {
    if (albums.get(album.key) === album) albums.delete(album.key);
    if (album.released) return;
    album.released = true;
    album.resolve(went);
  };

  /**
   * `how`: handled by the adapter, or given up at `release`. A part that timed out stays until
   * one of these: handled late, its album is still handed over (not kept for the next start).
   */
  const partDone = (updateId: number, how: "handled" | "given-up") => {
    const part = parts.get(updateId);
    if (!part) return;
    parts.delete(updateId);
    clearTimeout(part.timer);
    const { album } = part;
    if (how === "given-up") album.givenUp = true;
    album.open--;
    if (album.open === 0) {
      if (!album.givenUp) options.handedOver?.(album.updateIds);
      releaseWaiters(album, !album.givenUp);
    }
  };

  return {
    notePart(updateId, thread, albumId, messageId) {
      if (parts.has(updateId)) return;
      const key = JSON.stringify([thread, albumId]);
      let album = albums.get(key);
      if (!album) {
        let resolve: (handedOver: boolean) => void = () => {};
        const done = new Promise<boolean>((r) => {
          resolve = r;
        });
        album = {
          key,
          thread,
          firstId: messageId,
          updateIds: [],
          open: 0,
          givenUp: false,
          released: false,
          done,
          resolve,
        };
        albums.set(key, album);
      }
      album.firstId = Math.min(album.firstId, messageId);
      album.updateIds.push(updateId);
      album.open++;
      const part: Part = {
        album,
        timer: setTimeout(() => {
          logger.warn(
            `album part (update ${updateId}) not handled within ${timeoutMs} ms; the messages held behind it go on`,
          );
          releaseWaiters(part.album, true);
        }, timeoutMs),
      };
      const { timer } = part;
      timer.unref();
      parts.set(updateId, part);
    },

    handling(updateId, task) {
      const part = parts.get(updateId);
      if (!part) return;
      part.task = task.then(
        () => partDone(updateId, "handled"),
        (error: unknown) => {
          logger.warn(`album part (update ${updateId}) failed: ${String(error)}`);
          partDone(updateId, "handled");
        },
      );
    },

    hold(thread, messageId, deliver) {
      const waits: Promise<boolean>[] = [];
      for (const album of albums.values()) {
        if (album.thread === thread && album.firstId < messageId) waits.push(album.done);
      }
      const previous = lastHeld.get(thread);
      if (previous) waits.push(previous);
      if (waits.length === 0) return false;
      const delivered = Promise.all(waits).then(async (went) => {
        // Behind an album given up, or a message that stayed behind one: it stays too.
        if (!went.every(Boolean)) return false;
        try {
          await deliver();
        } catch (error) {
          logger.warn(`a message held behind an album failed: ${String(error)}`);
        }
        return true;
      });
      lastHeld.set(thread, delivered);
      delivering.add(delivered);
      void delivered.then(() => {
        delivering.delete(delivered);
        if (lastHeld.get(thread) === delivered) lastHeld.delete(thread);
      });
      return true;
    },

    async release() {
      const handled: Promise<void>[] = [];
      for (const [updateId, part] of [...parts]) {
        if (part.task) handled.push(part.task);
        else partDone(updateId, "given-up");
      }
      await Promise.all(handled);
      while (delivering.size > 0) await Promise.all([...delivering]);
    },
  };
}
