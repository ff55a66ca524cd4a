// What the soak samples and how much each may grow per hour after warm-up, with why.
// The engine's load is steady (~5 runs/s, retention holding ~20 s of finished runs), so
// every figure here should level off: a slope that does not is a leak.
import type { GrowthBound } from './slope.ts';

export interface Sample {
  /** Seconds since the first sample. */
  t: number;
  rssMiB: number;
  heapUsedMiB: number;
  fds: number;
  walMiB: number;
  dbMiB: number;
  timers: number;
  handles: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** Reported, not judged: where RSS and the heap's memory go, to read a slope by. */
  rssAnonMiB?: number;
  rssFileMiB?: number;
  rssShmemMiB?: number;
  heapTotalMiB?: number;
  externalMiB?: number;
  arrayBuffersMiB?: number;
  /** Restate only: the restate-server's RSS and its data dir (not the engine's process). */
  restateRssMiB?: number;
  restateDirMiB?: number;
  /** Runs started / finished so far (the harness's count). */
  started: number;
  finished: number;
}

export const BOUNDS: GrowthBound[] = [
  { metric: 'rssMiB', unit: 'MiB', perHour: 60, why: '1 MiB/min: a leak of ~60 bytes per run at ~18,000 runs/h; a steady engine plateaus at its working set' },
  { metric: 'heapUsedMiB', unit: 'MiB', perHour: 30, why: 'sampled after a forced full GC, so it is retained memory: 0.5 MiB/min, ~30 bytes per run' },
  { metric: 'fds', unit: 'fds', perHour: 100, why: 'a count that moves by the few sockets and files in flight; one descriptor leaked per 100 runs, webhook or panel requests would be ~200 an hour' },
  { metric: 'timers', unit: 'timers', perHour: 200, why: 'mean Timeout count over each window (counted every second); a timer left behind per 100 runs would be ~200 an hour, per run ~18,000' },
  { metric: 'handles', unit: 'resources', perHour: 200, why: 'mean count of all active handles and requests (sockets, timers, fs) over each window; same reasoning as timers' },
  { metric: 'walMiB', unit: 'MiB', perHour: 16, why: 'the WAL is checkpointed and reused; it may grow to its high-water mark in warm-up, not after' },
  { metric: 'dbMiB', unit: 'MiB', perHour: 16, why: 'retention deletes runs older than 20 s and gives pages back (incremental vacuum): the file holds a fixed window' },
  { metric: 'lagP99Ms', unit: 'ms', perHour: 1000, why: 'p99 event-loop delay per window: on a shared 2-core VM it follows the neighbours for minutes at a time (a 15 min SQLite run with flat memory and counts fitted 1,114 ± 439 ms/h at load ~28), so only a climb of seconds within the hour, a loop slowed by its own growing work, is judged' },
];

/** Reported, not judged: the restate-server is not the engine's process, and RocksDB's
 *  memtables and compactions move in steps over an hour. */
export const REPORTED_ONLY = ['restateRssMiB', 'restateDirMiB', 'lagMaxMs', 'rssAnonMiB', 'rssFileMiB', 'rssShmemMiB', 'heapTotalMiB', 'externalMiB', 'arrayBuffersMiB'] as const;
