// Items in flight (a session's pending step calls, its step attempts), in insertion order,
// held by links rather than in a table.
//
// Why not a Map or a ChurnMap: both keep their entries in a table that V8 replaces as it
// grows, shrinks or rehashes, and a replaced table keeps pointing at the entries it held.
// In the old generation (a run that lived through two scavenges, or every live object after
// a full GC) such a dead table keeps those entries, and all they reach (the pending step,
// its promise, the workflow's frame, the whole run), alive through every scavenge until the
// next full GC; promoted in turn, they do the same to newer objects. A removed link is
// emptied, so a stale pointer to it reaches nothing.
export interface Link<T> {
  value: T | undefined;
  prev: Link<T> | undefined;
  next: Link<T> | undefined;
}

/** Values must not be undefined (an emptied link is one whose value is). */
export class Links<T> {
  private head: Link<T> | undefined;
  private tail: Link<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(value: T): Link<T> {
    const link: Link<T> = { value, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = link;
    else this.head = link;
    this.tail = link;
    this.count++;
    return link;
  }

  /** Removes `link` (once; a second call does nothing) and empties it. */
  remove(link: Link<T>): void {
    if (link.value === undefined) return;
    if (link.prev) link.prev.next = link.next;
    else this.head = link.next;
    if (link.next) link.next.prev = link.prev;
    else this.tail = link.prev;
    link.value = link.prev = link.next = undefined;
    this.count--;
  }

  /** A snapshot, oldest first: links added or removed while iterating do not change it. */
  values(): T[] {
    const out: T[] = [];
    for (let l = this.head; l; l = l.next) out.push(l.value!);
    return out;
  }
}
