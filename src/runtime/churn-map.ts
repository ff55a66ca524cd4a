// A string-keyed table for long-lived registries whose entries come and go all the time
// (the runs in flight, their result waiters): what a Map would be, minus one V8 behaviour.
//
// Why not a Map: when a Map's table fills with deleted slots V8 rehashes it into a NEW table
// and leaves the old one pointing at the new one, its entries intact (for live iterators).
// A registry that lives long ends up with an old-space table; every table after it, and all
// its entries reach (whole run sessions), then survive each scavenge until a full GC. On the
// 100 x 10-step workload that was most of the ~2 MB promoted per scavenge and its 5-15 ms
// pauses of the host's event loop. An object used as a dictionary rehashes with no such link.
/** Keys are strings, or numbers used as such (a number and its decimal string are one key). */
type Key = string | number;

export class ChurnMap<V> {
  private table: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: Key): V | undefined {
    return this.table[key];
  }

  has(key: Key): boolean {
    return key in this.table;
  }

  set(key: Key, value: V): this {
    if (!(key in this.table)) this.count++;
    this.table[key] = value;
    return this;
  }

  delete(key: Key): boolean {
    if (!(key in this.table)) return false;
    delete this.table[key];
    this.count--;
    return true;
  }

  /** A snapshot: entries set or deleted while iterating do not change it. */
  values(): V[] {
    return Object.values(this.table);
  }

  clear(): void {
    this.table = Object.create(null) as Record<string, V>;
    this.count = 0;
  }
}
