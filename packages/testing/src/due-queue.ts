/** What the queue orders: a due time and, among equal times, the order of arrival. */
export interface Due {
  readonly seq: number;
  availableAt: number;
}

/**
 * The simulation's event queue: the items due next by virtual time, ties in `seq` order. An item
 * is pushed each time it becomes due (`push`); an entry whose item has since moved (other time,
 * or no longer `isQueued`) is skipped on `next`, so moving an item costs one push, not a search.
 * A binary heap: `push` and `next` take O(log n).
 */
export interface DueQueue<T extends Due> {
  push(item: T): void;
  /** The item due first, left in the queue (call `push` again once it is due again). */
  next(): T | undefined;
}

export function createDueQueue<T extends Due>(isQueued: (item: T) => boolean): DueQueue<T> {
  const heap: { at: number; item: T }[] = [];
  const before = (a: { at: number; item: T }, b: { at: number; item: T }) =>
    a.at < b.at || (a.at === b.at && a.item.seq < b.item.seq);
  const swap = (i: number, j: number) => {
    const t = heap[i] as { at: number; item: T };
    heap[i] = heap[j] as { at: number; item: T };
    heap[j] = t;
  };
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(heap[i] as { at: number; item: T }, heap[p] as { at: number; item: T })) return;
      swap(i, p);
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (
        l < heap.length &&
        before(heap[l] as { at: number; item: T }, heap[m] as { at: number; item: T })
      )
        m = l;
      if (
        r < heap.length &&
        before(heap[r] as { at: number; item: T }, heap[m] as { at: number; item: T })
      )
        m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  const pop = () => {
    const last = heap.pop();
    if (last !== undefined && heap.length > 0) {
      heap[0] = last;
      down(0);
    }
  };
  const live = (e: { at: number; item: T }) => isQueued(e.item) && e.item.availableAt === e.at;
  return {
    push(item) {
      heap.push({ at: item.availableAt, item });
      up(heap.length - 1);
    },
    next() {
      while (heap.length > 0) {
        const top = heap[0] as { at: number; item: T };
        if (live(top)) return top.item;
        pop();
      }
      return undefined;
    },
  };
}
