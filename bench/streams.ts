// npm run bench:streams [-- --quick] [-- --backend=sqlite|restate]: live output (issue 41,
// docs/live-output.md). One run writes N chunks to `ctx.stream('s')` while a reader in the
// same process follows it with `engine.runs.stream(runId, 's', { from: 0 })`:
//  - write: chunks/s from the run's trigger to its result (each chunk is a journal step);
//  - live read: chunks/s the follower saw, and the latency from a chunk's write (the time the
//    workflow code stamps into it, same process clock) to the follower receiving it, p50/p99;
//  - replay read: chunks/s of a reader from offset 0 after the run ended (the journal read);
//  - replica (Restate): the same, the run executed by a second engine on the same
//    restate-server (registered last, so Restate invokes it) and the follower on the first:
//    the chunks reach it through the run's step event log in Restate (docs/live-output.md);
//  - body: one step whose body writes N_BODY chunks with info.stream (yielding a macrotask
//    between writes, as a model's tokens come), a provisional follower: chunks/s from
//    trigger to result, and write -> follower p50/p99 (no commit per chunk: one with the result).
// Median of reps, each on a fresh engine; Restate over its embedded restate-server, smaller N.
// Also run by `npm run bench` (--only=streams) once per backend, printed under its table.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../compose/index.ts';
import { manual, workflow } from '../sdk/index.ts';

const QUICK = process.argv.includes('--quick');
const BACKEND = (process.argv.find((a) => a.startsWith('--backend='))?.slice(10) ?? 'sqlite') as 'sqlite' | 'restate';
if (BACKEND !== 'sqlite' && BACKEND !== 'restate') throw new Error(`--backend: '${BACKEND}' is not sqlite or restate`);
const REPS = QUICK ? 3 : 5;
const N = BACKEND === 'restate' ? (QUICK ? 100 : 300) : QUICK ? 500 : 2_000;

const writer = workflow('b-stream', (w) => {
  w.trigger(manual());
  w.run(async ({ input, ctx }) => {
    const out = ctx.stream('s');
    for (let i = 0; i < (input as number); i++) await out.write({ i, t: performance.now() });
    await out.close();
    return input as number;
  });
});

const N_BODY = BACKEND === 'restate' ? (QUICK ? 1_000 : 2_000) : QUICK ? 2_000 : 10_000;

const bodyWriter = workflow('b-body-stream', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    const n = await step.do('gen', async ({ stream }) => {
      const out = stream('s');
      for (let i = 0; i < (input as number); i++) {
        out.write({ i, t: performance.now() });
        await new Promise((r) => setImmediate(r));
      }
      return input as number;
    });
    await ctx.stream('s').close();
    return n;
  });
});

type Chunk = { i: number; t: number };
interface Rep { writePerS: number; livePerS: number; p50: number; p99: number; replayPerS: number }

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const median = (xs: number[]) => pct(xs, 50);

/** `replica`: a second engine on the first's restate-server executes the run (Restate only). */
async function rep(replica = false): Promise<Rep> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-streams-'));
  const engine = await createEngine({ backend: BACKEND, dataDir: dir, workflows: [writer] });
  await engine.start();
  const otherDir = replica ? mkdtempSync(join(tmpdir(), 'tranquil-bench-streams-b-')) : undefined;
  let other: Awaited<ReturnType<typeof createEngine>> | undefined;
  try {
    if (otherDir) {
      const ports = JSON.parse(readFileSync(join(dir, 'restate', 'ports.json'), 'utf8')) as { ingress: number; admin: number };
      other = await createEngine({ backend: 'restate', dataDir: otherDir, workflows: [writer], restate: { ingressUrl: `http://127.0.0.1:${ports.ingress}`, adminUrl: `http://127.0.0.1:${ports.admin}` } });
      await other.start();
    }
    const t0 = performance.now();
    const { runId } = await engine.trigger('b-stream', N);
    const lat: number[] = [];
    let seen = 0;
    const follow = (async () => {
      for await (const c of engine.runs.stream(runId, 's', { from: 0 })) {
        const chunk = c as Chunk;
        if (chunk.i !== seen) throw new Error(`the follower got chunk ${chunk.i} where ${seen} was next`);
        lat.push(performance.now() - chunk.t);
        seen++;
      }
      return performance.now();
    })();
    const v = await engine.result(runId, { timeout: '600s' });
    const written = performance.now();
    if (v.status !== 'succeeded') throw new Error(`the writer ended ${v.status}: ${v.error?.message}`);
    const followed = await follow;
    if (seen !== N) throw new Error(`the follower saw ${seen} of ${N} chunks`);
    const r0 = performance.now();
    let again = 0;
    for await (const _ of engine.runs.stream(runId, 's', { from: 0 })) again++;
    const replayMs = performance.now() - r0;
    if (again !== N) throw new Error(`a reader from 0 after the end got ${again} of ${N} chunks`);
    return { writePerS: N / ((written - t0) / 1000), livePerS: N / ((followed - t0) / 1000), p50: pct(lat, 50), p99: pct(lat, 99), replayPerS: N / (replayMs / 1000) };
  } finally {
    await other?.stop();
    await engine.stop();
    if (otherDir) rmSync(otherDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

interface BodyRep { perS: number; p50: number; p99: number }

async function bodyRep(): Promise<BodyRep> {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-bench-streams-'));
  const engine = await createEngine({ backend: BACKEND, dataDir: dir, workflows: [bodyWriter] });
  await engine.start();
  try {
    const t0 = performance.now();
    const { runId } = await engine.trigger('b-body-stream', N_BODY);
    const lat: number[] = [];
    const follow = (async () => {
      for await (const it of engine.runs.stream<Chunk>(runId, 's', { provisional: true })) {
        if ('rewind' in it) throw new Error('the follower got a rewind; no attempt failed');
        if (it.provisional) lat.push(performance.now() - it.chunk.t);
      }
    })();
    const v = await engine.result(runId, { timeout: '600s' });
    const done = performance.now();
    if (v.status !== 'succeeded') throw new Error(`the writer ended ${v.status}: ${v.error?.message}`);
    await follow;
    if (lat.length !== N_BODY) throw new Error(`the follower saw ${lat.length} of ${N_BODY} chunks as written`);
    return { perS: N_BODY / ((done - t0) / 1000), p50: pct(lat, 50), p99: pct(lat, 99) };
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await rep(); // warm-up
  const rs: Rep[] = [];
  for (let i = 0; i < REPS; i++) rs.push(await rep());
  const f = (k: keyof Rep, d = 0) => `${median(rs.map((r) => r[k])).toFixed(d)} (${Math.min(...rs.map((r) => r[k])).toFixed(d)}-${Math.max(...rs.map((r) => r[k])).toFixed(d)})`;
  console.log(`backend   ${BACKEND}: one run writing ${N} chunks, a follower from offset 0, ${REPS} reps, median (min-max)`);
  console.log(`write     ${f('writePerS')} chunks/s (trigger to result)`);
  console.log(`live read ${f('livePerS')} chunks/s; write -> follower p50 ${f('p50', 2)} ms, p99 ${f('p99', 2)} ms`);
  console.log(`replay    ${f('replayPerS')} chunks/s (a reader from offset 0 after the run ended)`);
  if (BACKEND === 'restate') {
    const xs: Rep[] = [];
    for (let i = 0; i < REPS; i++) xs.push(await rep(true));
    const x = (k: keyof Rep, d = 0) => `${median(xs.map((r) => r[k])).toFixed(d)} (${Math.min(...xs.map((r) => r[k])).toFixed(d)}-${Math.max(...xs.map((r) => r[k])).toFixed(d)})`;
    console.log(`replica   ${x('livePerS')} chunks/s read on the other replica; write -> follower there p50 ${x('p50', 2)} ms, p99 ${x('p99', 2)} ms (the run executed by a second engine)`);
  }
  await bodyRep(); // warm-up
  const bs: BodyRep[] = [];
  for (let i = 0; i < REPS; i++) bs.push(await bodyRep());
  const g = (k: keyof BodyRep, d = 0) => `${median(bs.map((r) => r[k])).toFixed(d)} (${Math.min(...bs.map((r) => r[k])).toFixed(d)}-${Math.max(...bs.map((r) => r[k])).toFixed(d)})`;
  console.log(`body      ${g('perS')} chunks/s from one step body (${N_BODY}, info.stream); write -> provisional follower p50 ${g('p50', 2)} ms, p99 ${g('p99', 2)} ms`);
}

await main();
