// The pending debounce bursts of a data dir, for the CLI (`runs list --debounced`, `why`,
// `runs describe`) on either backend: SQLite reads the file's debounce_pending rows,
// Restate the `tqdebounce` objects' state over the admin API.
import { readPendingBursts } from '../src/adapters/sqlite/debounce-store.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import type { PendingBurst } from '../src/domain/debounce-burst.ts';
import type { ResolvedConfig } from './config.ts';
import { payloadCodecFor } from './codec.ts';
import { openRestateAdmin } from './run-reader.ts';

/** undefined: nothing to read (no file, no Restate). */
export async function readBursts(config: ResolvedConfig, filter: { workflow?: string; runId?: string } = {}): Promise<PendingBurst[] | undefined> {
  if (config.backend === 'restate') {
    const admin = await openRestateAdmin(config);
    if (!admin) return undefined;
    const { pendingBursts } = await import('../src/adapters/restate/debounce-object.ts');
    return pendingBursts(admin, filter);
  }
  const file = ReadOnlyFile.open(config.dataDir, payloadCodecFor(config));
  if (!file) return undefined;
  try {
    return readPendingBursts(file.db, filter);
  } finally {
    file.close();
  }
}
