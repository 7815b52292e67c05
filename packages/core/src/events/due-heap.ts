/** One due slot of an event; `gen` tells a stale entry from the event's current one. */
export interface HeapEntry {
  due: number;
  id: string;
  gen: number;
}

/**
 * A min-heap of due slots, earliest first: the bus sets one timer for its top, not one per
 * event. Entries are never removed from the middle; a stale one is skipped when it comes up.
 */
export class DueHeap {
  private readonly entries: HeapEntry[] = [];

  get size(): number {
    return this.entries.length;
  }

  peek(): HeapEntry | undefined {
    return this.entries[0];
  }

  push(entry: HeapEntry): void {
    const heap = this.entries;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as HeapEntry).due <= entry.due) break;
      heap[i] = heap[parent] as HeapEntry;
      i = parent;
    }
    heap[i] = entry;
  }

  pop(): HeapEntry | undefined {
    const heap = this.entries;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let mDue = last.due;
      if (l < heap.length && (heap[l] as HeapEntry).due < mDue) {
        m = l;
        mDue = (heap[l] as HeapEntry).due;
      }
      if (r < heap.length && (heap[r] as HeapEntry).due < mDue) m = r;
      if (m === i) break;
      heap[i] = heap[m] as HeapEntry;
      i = m;
    }
    heap[i] = last;
    return top;
  }

  /** Keeps only the entries `live` accepts (stale ones dropped), in heap order again. */
  rebuild(live: (entry: HeapEntry) => boolean): void {
    const kept = this.entries.filter(live);
    this.entries.length = 0;
    for (const e of kept) this.push(e);
  }
}
