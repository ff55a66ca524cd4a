// The main thread's handle on the checkpoint worker (its code: checkpoint-worker.ts). Owns the
// worker's lifetime:
//   - started at the first checkpoint needed, not with the engine, and ended once idle for
//     IDLE_MS: an idle engine carries no second V8 isolate (idle RSS, issue 17);
//   - one request at a time (Checkpoints never sends a second before the first is answered);
//     the main thread never waits for an answer, it only gets a callback;
//   - close(): waits for the checkpoint in flight, then closes the worker's connection and
//     waits for the thread to end, so that the owner's own connection closes LAST (SQLite's
//     last close checkpoints and removes the -wal, which the clean-stop mark relies on);
//   - abandon() (a simulated crash): no mark is written after it, the thread is terminated and
//     never keeps the process alive (it is unref'ed whenever it is not checkpointing).
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { CHECKPOINT_WORKER_SOURCE } from './checkpoint-worker.ts';

/** An idle worker ends after this long (the next checkpoint starts a new one, ~20-40 ms off the loop). */
const IDLE_MS = 30_000;

/** node:worker_threads, required when the first worker starts: loading it costs an engine that
 *  never checkpoints (an idle one) ~0.45 MiB of RSS (node's worker, messaging and
 *  event-loop-utilization modules; issue 17). */
let workerClass: typeof Worker | undefined;
const loadWorker = (): typeof Worker =>
  (workerClass ??= (createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads')).Worker);

export interface CheckpointThreadOptions {
  /** The module the worker requires as better-sqlite3 (default: the one this package uses). */
  driver?: string;
  /** An idle worker ends after this long (default 30 s). */
  idleMs?: number;
}

export interface CheckpointRequest {
  last: string | undefined;
  disowned: boolean;
  /** The last pass of a cycle, run while the main thread holds its group commits. */
  final?: boolean;
}

export type CheckpointReply =
  /** `restarted`: a final pass copied every frame and this worker restarted the -wal. */
  | { type: 'done'; last: string | undefined; disowned: boolean; log: number; checkpointed: number; busy: number; restarted?: boolean }
  | { type: 'error'; message: string; code?: string; last: string | undefined; disowned: boolean }
  /** The thread could not start (better-sqlite3 not loadable in a worker, the file not openable). */
  | { type: 'unavailable'; message: string };

export class CheckpointThread {
  private worker: Worker | undefined;
  /** The request in flight and the worker it went to: only that worker's reply, error or end
   *  answers it (a retired worker can still be ending while its successor checkpoints). */
  private pending: { worker: Worker; answer: (r: CheckpointReply) => void } | undefined;
  private inFlight: Promise<CheckpointReply> | undefined;
  private idle: NodeJS.Timeout | undefined;
  private exited: Promise<void> | undefined;
  private readonly abandoned = new Int32Array(new SharedArrayBuffer(4));
  private driverPath: string | undefined;
  /** Threads started (a new one after each idle exit), for tests and diagnostics. */
  readonly stats = { started: 0 };
  /** Test-only: called when the worker holds mid-checkpoint (TRANQUIL_FAULT_CHECKPOINT). */
  onHeld: (() => void) | undefined;

  private readonly idleMs: number;

  constructor(private readonly file: string, opts: CheckpointThreadOptions = {}) {
    this.driverPath = opts.driver;
    this.idleMs = opts.idleMs ?? IDLE_MS;
  }

  /** The installed better-sqlite3 (resolved from this module, so an installed package finds
   *  its own dependency, whatever the host's cwd). Resolved when the first worker starts, not
   *  at the engine's start: a resolution is a dozen path operations (native-addon.ts). */
  private get driver(): string {
    return (this.driverPath ??= createRequire(import.meta.url).resolve('better-sqlite3'));
  }

  /** A checkpoint is in flight. */
  get busy(): boolean {
    return this.inFlight !== undefined;
  }

  /** A worker thread exists (checkpointing or idle, not yet ended). */
  get alive(): boolean {
    return this.worker !== undefined;
  }

  /** Runs one checkpoint on the worker (starting it if needed). Never rejects. */
  run(req: CheckpointRequest): Promise<CheckpointReply> {
    if (this.inFlight) throw new Error('CheckpointThread.run: a checkpoint is already in flight');
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const w = this.worker ?? this.start();
    // Kept alive while it checkpoints (a host that ends its script lets the checkpoint finish).
    w.ref();
    this.inFlight = new Promise<CheckpointReply>((resolve) => {
      this.pending = { worker: w, answer: (r) => {
        this.pending = undefined;
        this.inFlight = undefined;
        if (this.worker === w) {
          w.unref();
          if (r.type !== 'unavailable') this.idle = setTimeout(() => void this.retire(), this.idleMs).unref();
        }
        resolve(r);
      } };
    });
    w.postMessage({ type: 'checkpoint', ...req });
    return this.inFlight;
  }

  private start(): Worker {
    const Thread = loadWorker();
    const w = new Thread(CHECKPOINT_WORKER_SOURCE, {
      eval: true,
      workerData: { file: this.file, driver: this.driver, abandoned: this.abandoned.buffer },
      // Not the host's --import/--require hooks (tsx, APMs): the script is plain CommonJS.
      execArgv: [],
      // A small heap: the worker holds a connection and a few strings.
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 },
    });
    w.unref();
    this.worker = w;
    this.stats.started++;
    // This worker's own: a retired worker that ends after its successor started must neither
    // answer the successor's request nor speak for its readiness. (Both were shared once, and
    // the old worker's end answered the new one's first checkpoint "unavailable": checkpoints
    // then ran on the main thread for the rest of the process.)
    let ready = false;
    const answer = (r: CheckpointReply) => {
      if (this.pending?.worker === w) this.pending.answer(r);
    };
    w.on('message', (m: { type: string } & Record<string, unknown>) => {
      if (m.type === 'ready') ready = true;
      else if (m.type === 'held') this.onHeld?.();
      else if (m.type === 'failed') answer({ type: 'unavailable', message: String(m.message) });
      else answer(m as CheckpointReply);
    });
    w.on('error', (err) => {
      const message = err?.message ?? String(err);
      answer(ready ? { type: 'error', message, last: undefined, disowned: true } : { type: 'unavailable', message });
    });
    this.exited = new Promise<void>((resolve) => w.once('exit', () => {
      if (this.worker === w) this.worker = undefined;
      // Ended while checkpointing (terminated, out of memory): the file may have changed
      // without a new mark; nothing is vouched for any more (disowned).
      answer(ready ? { type: 'error', message: 'the checkpoint worker ended', last: undefined, disowned: true } : { type: 'unavailable', message: 'the checkpoint worker ended before it was ready' });
      resolve();
    }));
    return w;
  }

  /** Ends an idle worker (its connection closed first). */
  private async retire(): Promise<void> {
    const w = this.worker;
    if (!w || this.inFlight) return;
    this.worker = undefined;
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const exited = this.exited;
    // Held alive until it ended: a stop() the host awaits must not see the process exit first.
    w.ref();
    w.postMessage({ type: 'close' });
    await exited;
  }

  /** Waits for the checkpoint in flight, then closes the worker's connection and ends it. */
  async close(): Promise<void> {
    if (this.inFlight) await this.inFlight;
    await this.retire();
  }

  /** As if the process died: no mark after this, and the thread is ended without waiting. */
  abandon(): void {
    Atomics.store(this.abandoned, 0, 1);
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const w = this.worker;
    this.worker = undefined;
    if (w) {
      w.unref();
      void w.terminate();
    }
  }
}
