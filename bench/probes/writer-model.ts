// A model, not the engine: what a writer thread that owns the connection (issue 17's other
// shape) would give against today's shape, on the engine's own schema and statements. The
// engine did not bear it out (a measurement build of it: docs/reliability.md, "The engine
// itself did not gain"); kept as the record of that call.
// 100 concurrent 10-step runs; each step spends W µs of JavaScript (a busy wait: the engine's
// main-thread work without its SQLite share) and then queues its write.
//   pool:   today's shape. The main thread commits each batch at synchronous=NORMAL, fdatasyncs
//           the -wal on libuv's pool, answers 16 callers per turn and holds the next batch
//           until every answer ran (src/adapters/sqlite/commit-queue.ts, wal-sync.ts). 16 is
//           what the engine answered when this model's figures were taken; it answers 8 since.
//   writer: a worker thread owns the connection and commits each batch at synchronous=FULL
//           (its fsync inline, on that thread); up to two batches in flight, not held.
// Prints one JSON line: steps/s, writes per transaction, the main loop's delay p99 (1 ms
// resolution). Run alternately, as the machine's pace moves:
//   for i in 1 2 3 4; do for m in pool writer; do node --import tsx bench/probes/writer-model.ts $m; done; done
import { Worker } from 'node:worker_threads';
import { fdatasync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, RUN_WRITES } from '../../src/adapters/sqlite/store.ts';
import { STEP_RESULT, STEPS_PER_RUN } from '../lib/workflows.ts';

const mode = process.argv[2] === 'writer' ? 'writer' : 'pool';
const W = Number(process.argv[3] ?? 9);
const RUNS = Number(process.argv[4] ?? 5000);
const RESULT = JSON.stringify(STEP_RESULT);
const ANSWER_SLICE = 16; // the figures in docs/reliability.md were taken with 16 (see the header)
const MAX_IN_FLIGHT = 2;
const MAX_HELD = 256;

/** [statement, ...parameters]: the writes of one run, as RUN_WRITES takes them. */
type Op = [keyof typeof RUN_WRITES, ...unknown[]];
type Write = { op: Op; done: () => void };

const dir = mkdtempSync(join(tmpdir(), 'writer-model-'));
let created = 0;
function* runWrites(): Generator<Op> {
  const id = randomUUID();
  const now = Date.now();
  yield ['insertRun', id, 'bench-ten-steps', 'v', '{}', now, now, ++created];
  yield ['setStatus', 'running', null, now, id];
  for (let seq = 0; seq < STEPS_PER_RUN; seq++) yield ['upsertStep', id, id, seq, `s${seq}`, 'do', 'succeeded', 1, RESULT, null, now, now, null, null, seq + 1, null];
  yield ['finishRun', 'succeeded', `{"steps":${STEPS_PER_RUN}}`, null, now, id];
}

const busy = (us: number) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};

let queue: Write[] = [];
let scheduled = false;
let inFlight = 0;
let transactions = 0;
let roomWaiter: (() => void) | undefined;
let heldForAnswers = false;
const answering: { batch: Write[]; next: number }[] = [];

function answerSlice(): void {
  let left = ANSWER_SLICE;
  while (left > 0 && answering.length > 0) {
    const a = answering[0]!;
    const end = Math.min(a.batch.length, a.next + left);
    for (let i = a.next; i < end; i++) a.batch[i]!.done();
    left -= end - a.next;
    a.next = end;
    if (end === a.batch.length) answering.shift();
  }
  if (answering.length > 0) setImmediate(answerSlice);
  else if (heldForAnswers) {
    heldForAnswers = false;
    setImmediate(flush);
  }
}

function durable(batch: Write[]): void {
  inFlight--;
  if (answering.push({ batch, next: 0 }) === 1) answerSlice();
  const r = roomWaiter;
  roomWaiter = undefined;
  r?.();
}

function flush(): void {
  if (inFlight >= MAX_IN_FLIGHT && queue.length < MAX_HELD) return void (roomWaiter = flush);
  if (mode === 'pool' && answering.length > 0 && queue.length < MAX_HELD) return void (heldForAnswers = true);
  scheduled = false;
  const batch = queue;
  queue = [];
  if (batch.length === 0) return;
  transactions++;
  inFlight++;
  submit(batch);
}

function enqueue(op: Op, done: () => void): void {
  queue.push({ op, done });
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

let submit: (batch: Write[]) => void;
let worker: Worker | undefined;
if (mode === 'pool') {
  const db = openDatabase(dir, 'full');
  const stmts = Object.fromEntries(Object.entries(RUN_WRITES).map(([k, sql]) => [k, db.prepare(sql)]));
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const tx = db.transaction((batch: Write[]) => {
    for (const { op: [k, ...args] } of batch) stmts[k]!.run(...args);
  });
  const fd = openSync(`${db.name}-wal`, 'r');
  submit = (batch) => {
    normal.run();
    tx(batch);
    full.run();
    fdatasync(fd, () => durable(batch));
  };
} else {
  // The schema made here; the worker opens the same file as the engine would (WAL, FULL).
  const file = openDatabase(dir, 'full');
  const name = file.name;
  file.close();
  const w = new Worker(new URL('./writer-model-worker.mjs', import.meta.url), { workerData: { file: name, writes: RUN_WRITES } });
  worker = w;
  await new Promise((r) => w.once('message', r));
  const pending = new Map<number, Write[]>();
  let nextId = 0;
  w.on('message', (id: number) => {
    const batch = pending.get(id)!;
    pending.delete(id);
    durable(batch);
  });
  submit = (batch) => {
    const id = nextId++;
    pending.set(id, batch);
    w.postMessage({ id, ops: batch.map((x) => x.op) });
  };
}

const runAll = (runs: number) =>
  new Promise<void>((resolve) => {
    let started = 0;
    let finished = 0;
    const start = () => {
      if (started >= runs) return;
      started++;
      const writes = runWrites();
      const next = () => {
        const n = writes.next();
        if (n.done) {
          if (++finished === runs) resolve();
          else start();
          return;
        }
        busy(W);
        enqueue(n.value, next);
      };
      next();
    };
    for (let i = 0; i < 100; i++) start();
  });

await runAll(1000);
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
transactions = 0;
const t0 = performance.now();
await runAll(RUNS);
const seconds = (performance.now() - t0) / 1000;
h.disable();
console.log(JSON.stringify({
  mode, jsUsPerStep: W, stepsPerS: Math.round((RUNS * STEPS_PER_RUN) / seconds),
  writesPerTransaction: +((RUNS * (STEPS_PER_RUN + 3)) / transactions).toFixed(1), p99: +(h.percentile(99) / 1e6).toFixed(2),
}));
await worker?.terminate();
rmSync(dir, { recursive: true, force: true });
