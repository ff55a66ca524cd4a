// A run as one portable file (`.tqrun`, docs/data.md): the run row (workflow, pinned version,
// status, input, output/error, times), its whole journal, its signals (taken and pending), and
// the snapshot of its workflow file when it has one. Payloads are written in plain JSON (the
// file is for moving a run and for bug reports; it is created owner-only) and sealed again by
// the importing data dir's codec. Import is zod-checked, refuses a run id the data dir has,
// and writes everything in one transaction: a run resumes from there when an engine starts.
import * as z from 'zod';
import { RunStateError } from '../../domain/errors.ts';
import type { JournalEntry } from '../../domain/journal.ts';
import type { Json } from '../../domain/json.ts';
import { RUN_STATUSES } from '../../domain/run-status.ts';
import { parseOrThrow } from '../../domain/validate.ts';
import type { SqliteStore } from './store.ts';

export const RUN_FILE_FORMAT = 'tranquil-run';

const json = z.custom<Json>(() => true);
const errorInfo = z.object({ name: z.string(), message: z.string() }).passthrough();
const time = z.number().int().min(0);

const entrySchema = z
  .object({
    seq: z.number().int().min(0),
    name: z.string().min(1),
    kind: z.enum(['do', 'sleep', 'wait', 'now', 'random', 'emit']),
    status: z.enum(['running', 'retrying', 'sleeping', 'waiting', 'succeeded', 'failed', 'timedout']),
    attempts: z.number().int().min(0),
    result: json.optional(),
    error: errorInfo.optional(),
    startedAt: time.optional(),
    endedAt: time.optional(),
    wakeAt: time.optional(),
    nextRetryAt: time.optional(),
    retryLimit: z.number().int().min(1).optional(),
    order: z.number().int().optional(),
  })
  .strict();

export const runFileSchema = z
  .object({
    format: z.literal(RUN_FILE_FORMAT),
    formatVersion: z.literal(1),
    exportedAt: z.string(),
    run: z
      .object({
        runId: z.string().min(1).max(200),
        workflow: z.string().min(1),
        version: z.string().min(1),
        status: z.enum(RUN_STATUSES),
        input: json,
        output: json.optional(),
        error: errorInfo.optional(),
        createdAt: time,
        updatedAt: time,
        wakeAt: time.optional(),
        cancelRequested: z.boolean(),
        /** Who asked to cancel it and when (absent in files of older engines). */
        cancel: z.object({ by: z.string().min(1).max(200), at: time }).strict().optional(),
      })
      .strict(),
    journal: z.array(entrySchema),
    signals: z.array(z.object({ name: z.string().min(1), payload: json, createdAt: time, consumedSeq: z.number().int().min(0).optional() }).strict()),
    /** The workflow file's snapshot (file name -> text) when the run is of a workflow file. */
    snapshot: z.object({ version: z.string().regex(/^[0-9a-f]{6,64}$/), files: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), z.string()) }).strict().optional(),
  })
  .strict();

export type RunFile = z.infer<typeof runFileSchema>;

export function parseRunFile(value: unknown, source: string): RunFile {
  return parseOrThrow(runFileSchema, value, source);
}

/** The run as a file (undefined when the data dir has no such run). */
export function exportRun(store: SqliteStore, runId: string, now: number): RunFile | undefined {
  const row = store.getRunRow(runId);
  if (!row) return undefined;
  const run: RunFile['run'] = {
    runId, workflow: row.workflow, version: row.version, status: row.status, input: store.plain(row.input),
    createdAt: row.created_at, updatedAt: row.updated_at, cancelRequested: row.cancel_requested === 1,
  };
  if (row.output != null) run.output = store.plain(row.output);
  if (row.error != null) run.error = store.plain<RunFile['run']['error']>(row.error);
  if (row.wake_at != null) run.wakeAt = row.wake_at;
  if (row.cancel_by != null && row.cancel_at != null) run.cancel = { by: row.cancel_by, at: row.cancel_at };
  const signals = (store.db.prepare(`SELECT name, payload, created_at, consumed_seq FROM signals WHERE run_id = ? ORDER BY id`).all(runId) as {
    name: string; payload: string; created_at: number; consumed_seq: number | null;
  }[]).map((s) => ({ name: s.name, payload: store.plain(s.payload), createdAt: s.created_at, ...(s.consumed_seq == null ? {} : { consumedSeq: s.consumed_seq }) }));
  return { format: RUN_FILE_FORMAT, formatVersion: 1, exportedAt: new Date(now).toISOString(), run, journal: store.journal(runId) as RunFile['journal'], signals };
}

/** Writes the run into this file (call inside a transaction). Refuses an existing run id. */
export function importRun(store: SqliteStore, file: RunFile): void {
  const r = file.run;
  if (store.getRunRow(r.runId)) throw new RunStateError(`run ${r.runId} already exists in this data dir; nothing imported`);
  store.insertRun({ runId: r.runId, workflow: r.workflow, version: r.version, input: r.input, now: r.createdAt });
  for (const e of file.journal) store.recordStep(r.runId, e as JournalEntry);
  for (const s of file.signals) {
    store.insertSignal(r.runId, s.name, s.payload, s.createdAt);
    if (s.consumedSeq !== undefined) store.db.prepare(`UPDATE signals SET consumed_seq = ? WHERE id = last_insert_rowid()`).run(s.consumedSeq);
  }
  if (r.status === 'succeeded' || r.status === 'failed' || r.status === 'cancelled') store.finishRun(r.runId, r.status, r.updatedAt, r.output, r.error);
  else store.setStatus(r.runId, r.status, r.wakeAt, r.updatedAt);
  if (r.cancel) store.noteCancel(r.runId, r.cancel.at, r.cancel.by);
  if (r.cancelRequested) store.requestCancel(r.runId, r.updatedAt, null);
  // A blocked run's reason (or a parked run's error) is kept as it was.
  if (r.error && r.status !== 'failed') store.db.prepare(`UPDATE runs SET error = ? WHERE run_id = ?`).run(store.codec.encode(JSON.stringify(r.error)), r.runId);
}
