// Retention (docs/data.md): terminal runs older than a configured age are removed with their
// journal and inbox rows; live runs never. Pure shapes and the age rule; the sweeping lives in
// each backend's adapter (SQLite: src/adapters/sqlite/retention.ts).
import type { RunStatus } from './run-status.ts';

/** Default age after which a finished run is removed. */
export const DEFAULT_RETENTION_MS = 30 * 86_400_000;
/** Runs removed per transaction: small, so a step commit queued behind one waits little. */
export const DEFAULT_GC_BATCH = 100;

export const FINISHED: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface RetentionSettings {
  /** Finished runs whose last change is older than this (ms) are removed. */
  maxAgeMs: number;
  /** Runs per batch (one transaction each). */
  batchSize: number;
  /** Called after a sweep with the versions its removals left unreferenced; returns those
   *  whose stored artefacts (workflow file snapshots) it removed. */
  dropVersions?: (versions: readonly string[]) => string[];
}

/** engine.gc's options. */
export interface GcOptions {
  /** Report what would go; remove nothing. */
  dryRun?: boolean;
}

/** One run a retention sweep removed (or would). */
export interface GcRun {
  runId: string;
  workflow: string;
  /** On Restate 'finished' (Restate, not the engine's file, knows how it ended). */
  status: RunStatus | 'finished';
  /** When it finished (its last change; on Restate, when the engine forwarded it), ISO. */
  finishedAt: string;
}

/** What a retention sweep (engine.gc) removed, or would remove in a dry run. */
export interface GcReport {
  dryRun: boolean;
  /** Runs finished before this (ISO) were eligible. */
  cutoff: string;
  /** Runs removed (or, dry run, that would be). */
  runs: number;
  /** The first runs of those, oldest first (at most 100 listed). */
  sample: GcRun[];
  /** Event inbox rows older than the cutoff removed (or that would be). */
  events: number;
  /** Batches (transactions) the removal took. */
  batches: number;
  /** Database pages given back to the file system (incremental vacuum). */
  pagesReclaimed: number;
  /** Versions (workflow file snapshots) no remaining run references after this sweep. */
  unreferencedVersions: string[];
  /** Of those, the versions whose snapshot was removed. */
  snapshotsRemoved?: string[];
}

export const cutoffOf = (now: number, s: RetentionSettings): number => now - s.maxAgeMs;
