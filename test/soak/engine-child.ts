// The engine under soak, in its own process so its RSS and file descriptors are its own
// (test/soak/harness.ts reads them from /proc). It hosts the mixed workload the way an app
// would: manual runs with steps, a retried step and a sleep, runs waiting for a signal the
// driver sends, event-started runs, a schedule every 5 s, a webhook workflow (the parent
// POSTs to it), retention deleting finished runs as it goes, and the Runs panel (the parent
// polls it). It speaks JSON lines on stdout: `ready`, `start`/`done` per run (so the harness,
// not this process, keeps the growing sets of run ids), `sample` every SAMPLE_MS, `final`.
// stdin commands: `stop-load` (stop driving new runs), `final` (report live runs), `exit`.
import { createInterface } from 'node:readline';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createEngine, servePanel } from '../../compose/index.ts';
import { event, manual, schedule, webhook, workflow } from '../../sdk/index.ts';

const backend = process.env.SOAK_BACKEND === 'restate' ? 'restate' : 'sqlite';
const dataDir = process.env.SOAK_DATA_DIR!;
const sampleMs = Number(process.env.SOAK_SAMPLE_MS ?? 10_000);
const tickMs = Number(process.env.SOAK_TICK_MS ?? 1000);

const out = (msg: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(msg)}\n`);
// The last step of every workflow: its body runs once per run (no crash here), so the harness
// sees each finished run's `done` exactly once or knows something ran twice.
const mark = (kind: string, runId: string) => () => (out({ event: 'done', kind, runId }), 'ok');

const workflows = [
  workflow('soak-steps', (w) => {
    w.trigger(manual());
    w.run(async ({ step, ctx, input }) => {
      const a = await step.do('a', () => ({ n: (input as { n: number }).n, pad: 'x'.repeat(200) }));
      await step.do('flaky', { retries: { limit: 3, backoff: 'constant', delay: 100 } }, ({ attempt }) => {
        if (attempt === 1) throw new Error('first attempt fails on purpose');
        return attempt;
      });
      await step.sleep('nap', 1500);
      await step.do('b', () => a.n * 2);
      return step.do('mark', mark('steps', ctx.runId));
    });
  }),
  workflow('soak-signal', (w) => {
    w.trigger(manual());
    w.run(async ({ step, ctx }) => {
      const got = await step.waitForEvent<{ n: number }>('go', { timeout: '10m' });
      await step.do('use', () => got.n + 1);
      return step.do('mark', mark('signal', ctx.runId));
    });
  }),
  workflow('soak-event', (w) => {
    w.trigger(event('soak.evt'));
    w.run(async ({ step, ctx }) => {
      await step.do('take', () => 1);
      return step.do('mark', mark('event', ctx.runId));
    });
  }),
  workflow('soak-cron', (w) => {
    w.trigger(schedule('*/5 * * * * *', { catchUp: 'none' }));
    w.run(async ({ step, ctx }) => {
      await step.do('tick', () => 1);
      return step.do('mark', mark('schedule', ctx.runId));
    });
  }),
  workflow('soak-hook', (w) => {
    w.trigger(webhook({ path: 'soak-hook' }));
    w.run(async ({ step, ctx }) => {
      await step.do('take', () => 1);
      await step.sleep('nap', 500);
      return step.do('mark', mark('webhook', ctx.runId));
    });
  }),
];

// Retention far shorter than a soak, so runs are deleted while new ones start: a store that
// only grows would show as a slope in the file size, WAL or memory.
const engine = await createEngine({
  backend,
  dataDir,
  workflows,
  retention: { maxAge: '20s', batchSize: 100, sweepEvery: '10s' },
});
await engine.start();
const panel = await servePanel(engine);
out({ event: 'ready', pid: process.pid, webhook: await engine.webhookUrl('soak-hook'), panel: panel.url });

// Event-loop delay over each sample window (reset after every sample).
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
let errors = 0;
const fail = (what: string) => (e: unknown) => {
  errors++;
  out({ event: 'error', what, message: String((e as Error)?.message ?? e).slice(0, 300) });
};

// Timers and handles are counted every second and averaged over the window: one count is a
// step function of what happens to be in flight at that instant (a sleep, a request).
const counts = { n: 0, timers: 0, handles: 0 };
const counter = setInterval(() => {
  const resources = process.getActiveResourcesInfo();
  counts.n++;
  counts.handles += resources.length;
  counts.timers += resources.filter((r) => r === 'Timeout').length;
}, 1000);

function sample(): void {
  // A full GC first (node --expose-gc), so the heap figure is what is retained, not garbage
  // waiting for the next collection: the GC sawtooth would otherwise dominate a short fit.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const byType: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) byType[r] = (byType[r] ?? 0) + 1;
  out({
    event: 'sample',
    at: Date.now(),
    heapUsedMiB: m.heapUsed / 2 ** 20,
    heapTotalMiB: m.heapTotal / 2 ** 20,
    externalMiB: m.external / 2 ** 20,
    arrayBuffersMiB: m.arrayBuffers / 2 ** 20,
    timers: counts.timers / Math.max(1, counts.n),
    handles: counts.handles / Math.max(1, counts.n),
    lagP99Ms: lag.percentile(99) / 1e6,
    lagMaxMs: lag.max / 1e6,
    errors,
    resources: byType,
  });
  lag.reset();
  Object.assign(counts, { n: 0, timers: 0, handles: 0 });
}
const sampler = setInterval(sample, sampleMs);

let n = 0;
let driving = true;
async function tick(): Promise<void> {
  const i = n++;
  for (const k of [0, 1]) {
    const { runId } = await engine.trigger('soak-steps', { n: i * 2 + k });
    out({ event: 'start', kind: 'steps', runId });
  }
  const { runId: waiter } = await engine.trigger('soak-signal', null);
  out({ event: 'start', kind: 'signal', runId: waiter });
  setTimeout(() => void engine.signal(waiter, 'go', { n: i }).catch(fail('signal')), 300);
  const ev = await engine.emit('soak.evt', { i }, { id: `evt-${i}` });
  for (const runId of ev.runIds) out({ event: 'start', kind: 'event', runId });
  // Restate's engine-side clean-up runs when asked (docs/data.md), not on a timer.
  if (backend === 'restate' && i % 30 === 29) await engine.gc();
}
async function drive(): Promise<void> {
  while (driving) {
    const t0 = Date.now();
    await tick().catch(fail('tick'));
    await new Promise((r) => setTimeout(r, Math.max(0, tickMs - (Date.now() - t0))));
  }
}
const driver = drive();

// Every status but succeeded: at the end nothing may be live (stuck) or failed.
const NOT_DONE = ['pending', 'running', 'sleeping', 'waiting', 'retrying', 'parked', 'blocked', 'paused', 'failed', 'cancelled'] as const;
createInterface({ input: process.stdin }).on('line', (line) => {
  void (async () => {
    if (line === 'stop-load') {
      driving = false;
      await driver;
      out({ event: 'load-stopped', at: Date.now() });
    } else if (line === 'final') {
      const left: { runId: string; workflow: string; status: string; createdAt: string }[] = [];
      for (const status of NOT_DONE) {
        for (const r of await engine.runs.list({ status, limit: 1000 })) left.push({ runId: r.runId, workflow: r.workflow, status: r.status, createdAt: String(r.createdAt) });
      }
      out({ event: 'final', left, errors });
    } else if (line === 'exit') {
      clearInterval(sampler);
      clearInterval(counter);
      lag.disable();
      await panel.close();
      await engine.stop();
      out({ event: 'stopped' });
      process.exit(0);
    }
  })().catch(fail(line));
});
