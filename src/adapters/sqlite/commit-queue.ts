// Group commit: writes queued in the same turn of the event loop share ONE transaction.
// Each caller's promise resolves only after that transaction has committed (durable at
// the configured synchronous level), and rejects if it rolled back. Never ack-before-durable.
import type { SqliteStore } from './store.ts';

interface Pending {
  write: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class CommitQueue {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Transactions committed and writes carried, for benchmarks and `explain` of throughput. */
  readonly stats = { transactions: 0, writes: 0 };

  constructor(private readonly store: SqliteStore) {}

  enqueue<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  get size(): number {
    return this.queue.length;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const results: unknown[] = new Array(batch.length);
    const failures = new Map<number, unknown>();
    try {
      this.store.transaction(() => {
        batch.forEach((p, i) => {
          // A write that throws fails alone (savepoint), not the whole group.
          try {
            results[i] = this.store.db.transaction(p.write)();
          } catch (err) {
            failures.set(i, err);
          }
        });
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    this.stats.transactions++;
    this.stats.writes += batch.length;
    batch.forEach((p, i) => (failures.has(i) ? p.reject(failures.get(i)) : p.resolve(results[i])));
  }
}
