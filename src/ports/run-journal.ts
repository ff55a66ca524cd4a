// What a run session needs from storage while it replays and executes one run.
// The SQLite executor implements it in-process; a Deno child will reach it over the
// loopback protocol. Every method that returns a promise resolves only once durable.
import type { JournalEntry } from '../domain/journal.ts';
import type { Json } from '../domain/json.ts';

export interface RunJournal {
  readonly runId: string;
  readonly workflow: string;
  readonly input: Json;
  /** The journal as loaded when the session began, dense by seq. */
  readonly entries: readonly JournalEntry[];
  now(): number;
  /** Random source for ctx.random() first executions and retry jitter. */
  random(): number;
  /** Records (inserts or replaces) the entry at entry.seq. */
  record(entry: JournalEntry): Promise<void>;
  /** Consumes the oldest unconsumed signal named `signalName` and records `entry` with its payload, atomically. */
  takeSignal(signalName: string, entry: JournalEntry): Promise<{ payload: Json } | undefined>;
  /** Records the emit entry and publishes the event to the inbox, atomically. */
  emit(entry: JournalEntry, event: { name: string; payload: Json; id: string }): Promise<void>;
  cancelRequested(): boolean;
}
