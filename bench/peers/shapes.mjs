// The shapes every system runs in the peer rows (bench/lib/peers.ts), written once so the three
// children (ours-child.mjs, dbos-child.mjs, cf-child.mjs) measure the same thing the same way.
// Plain JavaScript on plain node: the peers' packages live in bench/peers/node_modules, outside
// the root package and its type-check, and a dev loader (tsx) would add ~70 MiB to idle RSS.
//
// A system is { run(n, fan): Promise<void> }: one workflow run of n steps, each returning
// RESULT (~200 bytes of JSON), sequential (fan false) or all at once with Promise.all (fan true).
import { readFileSync, readdirSync } from 'node:fs';

export const RESULT = { ok: true, v: 'x'.repeat(170), n: 12345 };
export const STEPS = 10;
const TICK_MS = 10; // CLK_TCK is 100 on Linux (getconf CLK_TCK)

export const report = (o) => process.stdout.write(JSON.stringify(o) + '\n');
/** One line: the message, and the cause's (undici's "fetch failed" says nothing alone). */
export const why = (e) => `${String(e?.message ?? e).split('\n')[0]}${e?.cause ? ` (${String(e.cause.code ?? '')} ${String(e.cause.message ?? e.cause).split('\n')[0]})` : ''}`;
export const now = () => performance.now();

/** CPU ms (user + system, reaped children included) of each process under the roots. */
export function treeCpuMs(roots) {
  const kids = new Map();
  const stats = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      stats.set(Number(d), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch { /* exited */ }
  }
  let ticks = 0;
  const seen = new Set();
  const walk = (p) => {
    if (seen.has(p)) return;
    seen.add(p);
    ticks += stats.get(p) ?? 0;
    for (const c of kids.get(p) ?? []) walk(c);
  };
  for (const r of roots) walk(r);
  return ticks * TICK_MS;
}

/** Closed loop: `inFlight` clients start a run and await it, until `seconds` passed; steps/s
 *  over everything that finished (the last runs drained), and the CPU of every process of
 *  the system (this child's tree plus `cpuPids`, e.g. the Postgres server) per step. */
export async function inFlightRate(sys, inFlight, seconds, cpuPids = []) {
  const roots = [process.pid, ...cpuPids];
  const cpu0 = treeCpuMs(roots);
  const t0 = now();
  const stopAt = t0 + seconds * 1000;
  let runs = 0;
  const client = async () => {
    while (now() < stopAt) {
      await sys.run(STEPS, false);
      runs++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, client));
  const s = (now() - t0) / 1000;
  const cpuMs = treeCpuMs(roots) - cpu0;
  return { inFlight, runs, seconds: s, stepsPerS: (runs * STEPS) / s, cpuMsPerStep: cpuMs / (runs * STEPS) };
}

/** One run at a time: median ms per 10-step run. */
export async function oneAtATime(sys, runs) {
  const xs = [];
  for (let i = 0; i < runs; i++) {
    const a = now();
    await sys.run(STEPS, false);
    xs.push(now() - a);
  }
  xs.sort((a, b) => a - b);
  return { runs, p50Ms: xs.length % 2 ? xs[xs.length >> 1] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2 };
}

export async function timedRun(sys, n, fan) {
  const a = now();
  await sys.run(n, fan);
  return now() - a;
}

export function withDeadline(p, ms, what) {
  let t;
  return Promise.race([p, new Promise((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms)))]).finally(() => clearTimeout(t));
}

/** Runs `n` finished 10-step runs into a store (for start-up with history), `inFlight` at a
 *  time. Set-up, not a figure: a request that fails (miniflare's local server resets a
 *  connection now and then under load) is retried, up to n/10 times in all. */
export async function fill(sys, n, inFlight) {
  let next = 0;
  let retried = 0;
  const client = async () => {
    while (next < n) {
      next++;
      for (;;) {
        try {
          await sys.run(STEPS, false);
          break;
        } catch (e) {
          if (++retried > n / 10) throw e;
        }
      }
    }
  };
  const a = now();
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, client));
  return { filled: n, ms: now() - a, retried };
}

/**
 * The child's main: `open()` starts the system on args' store and returns { sys, close };
 * `mode` picks what to measure:
 *   shapes  warm-up, runs in flight, one at a time, one long sequential run, a fan-out;
 *   idle    start, one run, wait idleMs, print { ready }, stay until SIGTERM (the parent reads RSS);
 *   fill    n finished runs into the store, then close;
 *   start   start on a store that already has finished runs, time to the first finished run.
 * Each figure that fails says why instead of a number; errors never hang the child.
 */
export async function main(a, open, hooks = {}) {
  const keep = setInterval(() => {}, 1 << 30);
  const tOpen = now();
  let sys;
  try {
    sys = await withDeadline(open(a), 120_000, 'start');
    if (a.mode === 'start') {
      await withDeadline(sys.sys.run(STEPS, false), 60_000, 'first run');
      report({ startToFirstRunMs: now() - tOpen, processStartToFirstRunMs: now() });
    } else if (a.mode === 'fill') {
      report(await withDeadline(fill(sys.sys, a.n, a.inFlight), a.deadlineMs, 'fill'));
    } else if (a.mode === 'idle') {
      await withDeadline(sys.sys.run(STEPS, false), 60_000, 'first run');
      await new Promise((r) => setTimeout(r, a.idleMs));
      report({ ready: true, startToFirstRunMs: now() - tOpen });
      await new Promise((r) => process.once('SIGTERM', r));
    } else if (a.mode === 'shapes') {
      const out = {};
      const d = a.deadlineMs;
      for (let i = 0; i < a.warmup; i++) await withDeadline(sys.sys.run(STEPS, false), 60_000, 'warm-up');
      const guard = async (key, fn) => {
        try {
          out[key] = await fn();
        } catch (e) {
          out[key] = { na: why(e) };
        }
      };
      const rate = (k) => withDeadline(inFlightRate(sys.sys, k, a.seconds, a.cpuPids ?? []), d, `${k} in flight`);
      await guard('inFlight', async () => {
        try {
          return await rate(a.inFlight);
        } catch (e) {
          // Cloudflare's local simulator may fail at 100 in flight: the child then measures
          // the fallback on a fresh store and the row says so.
          if (!a.inFlightFallback || !hooks.reopen) throw e;
          await sys.close().catch(() => {});
          sys = await hooks.reopen(a);
          return { ...(await rate(a.inFlightFallback)), fellBackFrom: a.inFlight, why: why(e) };
        }
      });
      await guard('oneAtATime', () => withDeadline(oneAtATime(sys.sys, a.oneAtATime), d, 'one at a time'));
      await guard('sequential', async () => {
        for (const n of [a.seqSteps, ...(a.seqFallback ? [a.seqFallback] : [])]) {
          try {
            return { steps: n, ms: await withDeadline(timedRun(sys.sys, n, false), d, `${n} sequential steps`) };
          } catch (e) {
            if (n !== a.seqSteps || !a.seqFallback) throw e;
            out.sequentialCapped = why(e);
          }
        }
      });
      await guard('fanOut', () => withDeadline(timedRun(sys.sys, a.fanSteps, true).then((ms) => ({ steps: a.fanSteps, ms })), d, `fan-out of ${a.fanSteps}`));
      report(out);
    }
  } catch (e) {
    report({ error: why(e) });
  } finally {
    await sys?.close().catch(() => {});
    clearInterval(keep);
  }
  process.exit(0);
}
