// Probe (issue 39): the CPU a queued step adds on the fast path, measured on its own parts in
// a tight loop (less noisy on a shared machine than steps/s): reading `{ queue, key }` options
// (a new object per call) against a step without options, and a free slot taken and released
// (QueueManager.tryAcquire + release) with a store that counts its batched writes.
// Run: npx tsx bench/probes/queue-fast-path.ts
import { queue } from '../../sdk/queue.ts';
import { resolveStepOptions } from '../../sdk/step-options.ts';
import { QueueManager } from '../../src/runtime/queues.ts';
import type { HoldRows, QueueStore } from '../../src/ports/queue-store.ts';

const N = 1_000_000;
let batches = 0;
const store: QueueStore = {
  define: async () => {},
  recover: () => ({ waiting: [], held: [], starts: [], maxOrder: 0 }),
  wait: async () => {},
  grant: async () => {},
  release: () => {},
  leave: () => {},
  prune: () => {},
  restamp: () => {},
  writeHolds: (take: () => HoldRows) => void setImmediate(() => (batches++, take())),
};
const llm = queue('llm', { concurrency: 5, key: { concurrency: 1 } });

function perCall(label: string, fn: (i: number) => void): number {
  for (let i = 0; i < 100_000; i++) fn(i); // warm-up
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) fn(i);
  const c = process.cpuUsage(c0);
  const us = (c.user + c.system) / N;
  console.log(`${label.padEnd(44)} ${(us * 1000).toFixed(0)} ns/call`);
  return us;
}

const m = new QueueManager(store, () => Date.now(), [llm]);
await m.start();
const keys = ['u0', 'u1', 'u2', 'u3'];
perCall('step options: none (cached)', () => resolveStepOptions('s', undefined, undefined));
perCall('step options: { queue, key } (a new object)', (i) => resolveStepOptions('s', undefined, { queue: llm, key: keys[i & 3]! }));
perCall('slot: tryAcquire + release (free slot)', (i) => m.tryAcquire({ queue: llm, key: keys[i & 3]!, runId: 'r', step: `s${i & 7}` })!.release());
await new Promise((r) => setImmediate(r));
console.log(`batched row writes scheduled: ${batches} (one per turn, not per step)`);
m.stop();
