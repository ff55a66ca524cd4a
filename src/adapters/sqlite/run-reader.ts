// RunReader over the SQLite file: the engine's own (over its open store) and the CLI's
// (a read-only open of the data dir's file, no owner lease, so it works while a `serve` or
// an embedding app owns the data dir).
import { readQueueSummaries, readSlotWait } from './queue-store.ts';
import type { QueueSummary } from '../../domain/queue-summary.ts';
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../../domain/errors.ts';
import * as z from 'zod';
import { decodeCursor, encodeCursor } from '../../domain/run-cursor.ts';
import { DEFAULT_PAGE, type ChildOutput, type RunFilter, type RunPage, type RunView } from '../../domain/run-view.ts';
import { FileTables } from './file-tables.ts';
import type { WorkflowPause } from '../../domain/workflow-pause.ts';
import type { OutboxLookup, RunReader } from '../../ports/run-reader.ts';
import { identityCodec, type PayloadCodec } from '../../domain/payload-codec.ts';
import { checkCodec } from './codec-check.ts';
import { toEntry } from './trigger-store.ts';
import { MIGRATIONS } from './schema.ts';
import { DB_FILE, SqliteStore } from './store.ts';
import { TriggerTables } from './trigger-tables.ts';
import { nativeAddonPath } from './native-addon.ts';

const cursorSchema = z.object({ s: z.number().int().min(0) });

export class SqliteRunReader implements RunReader {
  /** `onClose`: what closing this reader releases (nothing for the engine's own store). */
  constructor(private readonly store: SqliteStore, private readonly onClose: () => void = () => {}) {}

  async getRun(runId: string): Promise<RunView | undefined> {
    const row = this.store.getRunRow(runId);
    const view = row && this.store.view(row, true);
    // A step (or the run itself: run-level flow control) waiting for a queue slot: where it
    // stands in line (`why`).
    const queued = view?.status === 'running' || view?.status === 'pending' ? readSlotWait(this.store.db, runId) : undefined;
    return queued ? { ...view!, queued } : view;
  }

  async workflowPauses(): Promise<WorkflowPause[]> {
    return this.store.pauses.list();
  }

  async queueSummaries(now: number): Promise<QueueSummary[]> {
    return readQueueSummaries(this.store.db, now);
  }

  async childOutput(runId: string): Promise<ChildOutput | undefined> {
    return new FileTables(this.store.db).output(runId);
  }

  /** One page: a row more than asked for says whether there is a next page. */
  async listRuns(filter: RunFilter): Promise<RunPage> {
    const limit = filter.limit ?? DEFAULT_PAGE;
    const beforeSeq = filter.cursor === undefined ? undefined : decodeCursor('sqlite', filter.cursor, cursorSchema).s;
    const rows = this.store.listRunRows({ status: filter.status, workflow: filter.workflow, since: filter.since, until: filter.until, parent: filter.parent, queue: filter.queue, beforeSeq, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const runs = page.map((r) => this.store.view(r, false));
    if (filter.queue !== undefined) {
      for (const v of runs) {
        const queued = readSlotWait(this.store.db, v.runId);
        if (queued) v.queued = queued;
      }
    }
    return rows.length > limit ? { runs, next: encodeCursor('sqlite', { s: page[page.length - 1]!.created_seq }) } : { runs };
  }

  async close(): Promise<void> {
    this.onClose();
  }
}

/** The run outbox lookup a forwarding backend (Restate) reads runs against. */
export function outboxLookup(store: SqliteStore): OutboxLookup {
  return async (runId) => {
    const row = store.getRunRow(runId);
    return row && toEntry(row, store.codec);
  };
}

/** A data dir's file opened read-only: runs, and the trigger tables (events, schedules,
 *  slots, webhook secrets, settings) for the CLI's other reading commands. */
export class ReadOnlyFile {
  readonly store: SqliteStore;
  readonly triggers: TriggerTables;

  private constructor(readonly db: Database.Database, codec: PayloadCodec) {
    this.store = new SqliteStore(db, codec);
    this.triggers = new TriggerTables(db, codec);
  }

  /** undefined when the data dir holds no database yet. `codec`: the payload codec the
   *  file was written with (a missing or wrong key is refused here, in one line). */
  static open(dataDir: string, codec: PayloadCodec = identityCodec): ReadOnlyFile | undefined {
    const file = join(dataDir, DB_FILE);
    if (!existsSync(file)) return undefined;
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: nativeAddonPath() });
      db.pragma('busy_timeout = 5000');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version === 0 || version > MIGRATIONS.length) throw new Error(`schema version ${version}, this CLI understands 1..${MIGRATIONS.length}`);
      if (version < MIGRATIONS.length) throw new Error(`schema version ${version} is older than this CLI (${MIGRATIONS.length}): start the engine once on this data dir to upgrade it`);
      checkCodec(db, codec, { record: false });
      return new ReadOnlyFile(db, codec);
    } catch (err) {
      db?.close();
      if (err instanceof StorageError) throw err;
      throw new StorageError(`cannot read ${file}: ${(err as Error).message}`);
    }
  }

  /** The runs the SQLite backend had in flight when the data dir switched to Restate
   *  (the drain: docs/restate.md); they are read from this file. */
  drainedRunIds(): string[] {
    return (this.db.prepare('SELECT run_id FROM drain_runs').all() as { run_id: string }[]).map((r) => r.run_id);
  }

  /** A reader of this file's runs; closing it closes the file. */
  runReader(): SqliteRunReader {
    return new SqliteRunReader(this.store, () => this.close());
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
