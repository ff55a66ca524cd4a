// Read-only access to a data dir for the CLI's reading commands (runs list/describe, why,
// events, workflows list). Opens the SQLite file with readonly: true and takes no owner
// lease, so it works while a `tranquil serve` (or an embedding app) owns the data dir.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError, UnknownRunError } from '../src/domain/errors.ts';
import type { RunFilter, RunView } from '../src/domain/run-view.ts';
import { DB_FILE, SqliteStore } from '../src/adapters/sqlite/store.ts';
import { MIGRATIONS } from '../src/adapters/sqlite/schema.ts';
import { TriggerTables } from '../src/adapters/sqlite/trigger-tables.ts';

export class ReadOnlyData {
  readonly store: SqliteStore;
  readonly triggers: TriggerTables;

  private constructor(private readonly db: Database.Database) {
    this.store = new SqliteStore(db);
    this.triggers = new TriggerTables(db);
  }

  /** undefined when the data dir holds no database yet. */
  static open(dataDir: string): ReadOnlyData | undefined {
    const file = join(dataDir, DB_FILE);
    if (!existsSync(file)) return undefined;
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version === 0 || version > MIGRATIONS.length) throw new Error(`schema version ${version}, this CLI understands 1..${MIGRATIONS.length}`);
      if (version < MIGRATIONS.length) throw new Error(`schema version ${version} is older than this CLI (${MIGRATIONS.length}): start the engine once on this data dir to upgrade it`);
      return new ReadOnlyData(db);
    } catch (err) {
      db?.close();
      throw new StorageError(`cannot read ${file}: ${(err as Error).message}`);
    }
  }

  listRuns(filter: RunFilter): RunView[] {
    return this.store.listRunRows(filter).map((r) => this.store.view(r, false));
  }

  getRun(runId: string): RunView {
    const row = this.store.getRunRow(runId);
    if (!row) throw new UnknownRunError(runId);
    return this.store.view(row, true);
  }

  findRun(runId: string): RunView | undefined {
    const row = this.store.getRunRow(runId);
    return row && this.store.view(row, true);
  }

  close(): void {
    this.db.close();
  }
}
