// One engine replica for the cluster tests, run inside its host namespace. Config comes as
// JSON in REPLICA_CONFIG (restate URLs, endpoint, identity keys, data dir); step attempts are
// appended to ATTEMPTS (a file shared by all replicas: namespaces share the filesystem).
// Commands arrive as JSON lines on stdin ({ id, op, ... }); each answer is one JSON line on
// stdout ({ id, ok, value } or { id, ok: false, error }). Prints {"ready":true} once started.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { resolveConfig } from '../../compose/config.ts';
import { createEngine } from '../../compose/index.ts';
import { readQueueRows } from '../../compose/queue-reader.ts';
import { event, manual, queue, schedule, workflow } from '../../sdk/index.ts';

const attempts = process.env.ATTEMPTS!;
const me = process.env.REPLICA_NAME ?? 'replica';
// `<what> <key> <replica> <ms>`: the time (this process's clock) says when a body ran, so a
// partition test can tell a body run again after a cut from one run twice for no reason.
const note = (line: string) => appendFileSync(attempts, `${line} ${me} ${Date.now()}\n`);

const job = workflow('job', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const { n, nap } = input as { n: number; nap: number };
    const a = await step.do('a', ({ idempotencyKey }) => (note(`a ${idempotencyKey}`), n * 2));
    await step.sleep('nap', nap);
    const b = await step.do('b', ({ idempotencyKey }) => (note(`b ${idempotencyKey}`), a + 1));
    return { n, a, b };
  });
});

const waiter = workflow('waiter', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    const got = await step.waitForEvent('go', { timeout: '60s' });
    return step.do('after', ({ idempotencyKey }) => (note(`after ${idempotencyKey}`), got));
  });
});

const onOrder = workflow('on-order', (w) => {
  w.trigger(event('order.placed'));
  w.run(async ({ step, input }) => step.do('handle', ({ idempotencyKey }) => (note(`handle ${idempotencyKey}`), input)));
});

const beat = workflow('beat', (w) => {
  w.trigger(schedule('*/2 * * * * *'));
  w.run(async ({ step, input }) => step.do('beat', ({ idempotencyKey }) => (note(`beat ${idempotencyKey}`), (input as { slot: string }).slot)));
});

// Children across replicas (issue 40): three awaited children at once; a parent and its
// children may run on different replicas, and either may die mid-way. A child waits for 'go'
// between its steps, so the test kills a replica while every child is in flight.
const kid = workflow('kid', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const { n } = input as { n: number };
    const a = await step.do('a', ({ idempotencyKey }) => (note(`a ${idempotencyKey}`), n * 2));
    await step.waitForEvent('go', { timeout: '120s' });
    const b = await step.do('b', ({ idempotencyKey }) => (note(`b ${idempotencyKey}`), a + 1));
    return { n, a, b };
  });
});

const parent = workflow('parent', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const { k } = input as { k: number };
    const outs = await Promise.all([1, 2, 3].map((i) => step.invoke(`child${i}`, 'kid', { n: k * 10 + i })));
    return step.do('sum', ({ idempotencyKey }) => (note(`sum ${idempotencyKey}`), outs.map((o) => (o as { b: number }).b)));
  });
});

// The bench's workload (bench/lib/cluster.ts): ten steps of ~200 B each, as bench/lib/workflows.ts.
const ten = workflow('ten', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < 10; i++) await step.do(`s${i}`, () => ({ ok: true, v: 'x'.repeat(170), n: 12345 }));
    return { steps: 10 };
  });
});

// Flow control across replicas (issue 39): a step-level queue and a run-level queue, each of
// concurrency 3. Each body attempt notes its own start and end (`qstart|qend <attempt> <queue>
// <run> <ms>`), so the test can count the bodies running at once cluster-wide.
const stepQueue = queue('cq-step', { concurrency: 3 });
const runQueue = queue('cq-run', { concurrency: 3 });
// The body passes its signal on, as an LLM call's fetch would: aborted, it ends there.
const queuedBody = async (name: string, runId: string, ms: number, signal: AbortSignal) => {
  const attempt = randomUUID().slice(0, 8);
  note(`qstart ${attempt} ${name} ${runId} ${Date.now()}`);
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
    });
  } finally {
    note(`qend ${attempt} ${name} ${runId} ${Date.now()}`);
  }
  return runId;
};

const qstep = workflow('qstep', { queues: [stepQueue] }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input, ctx: { runId } }) => {
    const { ms } = input as { ms: number };
    await step.sleep('spread', 50); // the run holds nothing while it sleeps
    return step.do('call', { queue: 'cq-step' }, ({ signal }) => queuedBody('cq-step', runId, ms, signal));
  });
});

const qrun = workflow('qrun', { runs: { queue: runQueue } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input, ctx: { runId } }) => step.do('call', ({ signal }) => queuedBody('cq-run', runId, (input as { ms: number }).ms, signal)));
});

// Live output across replicas (issue 41): a stream and a published key written by whichever
// replica executes the run, read through either.
const talk = workflow('talk', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('say', ({ idempotencyKey }) => void note(`say ${idempotencyKey}`));
    const out = ctx.stream('out');
    await out.write('c0');
    await out.write(new Map([['n', 1]]));
    await ctx.publish('phase', 'waiting');
    await step.waitForEvent('go', { timeout: '120s' });
    await out.write('c2');
    await out.close();
    await ctx.publish('phase', 'done');
    return 'ok';
  });
});

const engine = await createEngine({ ...JSON.parse(process.env.REPLICA_CONFIG!), backend: 'restate', workflows: [job, waiter, onOrder, beat, ten, kid, parent, qstep, qrun, talk], log: { level: 'error' } });
await engine.start();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

type Command = { id: number; op: string; [k: string]: unknown };
const ops: Record<string, (c: Command) => Promise<unknown>> = {
  trigger: async (c) => engine.trigger(c.workflow as string, c.input ?? null, { runId: c.runId as string }),
  result: async (c) => {
    const v = await engine.result(c.runId as string, { timeout: (c.timeout as string) ?? '90s' });
    return { status: v.status, output: v.output, steps: v.steps?.map((s) => s.name) };
  },
  status: async (c) => (await engine.runs.get(c.runId as string)).status,
  signal: async (c) => engine.signal(c.runId as string, c.name as string, (c.payload ?? null) as never),
  emit: async (c) => engine.emit(c.name as string, (c.payload ?? null) as never, { id: c.eventId as string }),
  events: async () => engine.events.list(),
  children: async (c) => (await engine.runs.list({ parent: c.runId as string })).map((r) => r.runId).sort(),
  slots: async () => engine.schedules.slots({ workflow: 'beat' }),
  // Every chunk of a stream from `from` until it is closed (a Map chunk as its entries).
  stream: async (c) => {
    const got: unknown[] = [];
    for await (const chunk of engine.runs.stream(c.runId as string, c.name as string, { from: (c.from as number) ?? 0 })) got.push(chunk instanceof Map ? { map: [...chunk] } : chunk);
    return got;
  },
  state: async (c) => engine.runs.state(c.runId as string, c.key as string, { timeout: '60s' }),
  // What `tranquil queues describe <name>` reads (compose/queue-reader.ts: admin SQL over the queue's object).
  queue: async (c) => readQueueRows(resolveConfig({ ...JSON.parse(process.env.REPLICA_CONFIG!), backend: 'restate' }), c.name as string),
  stop: async () => {
    await engine.stop();
    setImmediate(() => process.exit(0));
    return true;
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const c = JSON.parse(line) as Command;
  void (async () => {
    try {
      const value = await ops[c.op]!(c);
      process.stdout.write(`${JSON.stringify({ id: c.id, ok: true, value: value ?? null })}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ id: c.id, ok: false, error: `${(err as Error).name}: ${(err as Error).message}` })}\n`);
    }
  })();
}
