// `tranquil queues list|describe` on either backend: SQLite reads the data dir's file (its
// queue tables, every queue an engine declared); Restate reads the queue objects' state over
// the admin API (queue-views.ts: the queues with anything held or waiting now).
import { readQueue, readQueues } from '../src/adapters/sqlite/queue-store.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import type { QueueLimits } from '../src/domain/rate-limit.ts';
import type { ResolvedConfig } from './config.ts';
import { payloadCodecFor } from './codec.ts';
import { openRestateAdmin } from './run-reader.ts';

export interface QueueRow {
  name: string;
  limits: QueueLimits;
  running: number;
  waiting: number;
  keys?: { key: string; running: number; waiting: number }[];
}

/** undefined: nothing to read (no file, no Restate). `name`: that queue only, with its keys. */
export async function readQueueRows(config: ResolvedConfig, name?: string): Promise<QueueRow[] | undefined> {
  if (config.backend === 'restate') {
    const admin = await openRestateAdmin(config);
    if (!admin) return undefined;
    const { queueSummaries } = await import('../src/adapters/restate/queue-views.ts');
    const all = await queueSummaries(admin);
    return name === undefined ? all.map(({ keys: _keys, ...q }) => q) : all.filter((q) => q.name === name);
  }
  const file = ReadOnlyFile.open(config.dataDir, payloadCodecFor(config));
  if (!file) return undefined;
  try {
    if (name === undefined) return readQueues(file.db);
    const q = readQueue(file.db, name);
    return q ? [q] : [];
  } finally {
    file.close();
  }
}
