// Peer rows (issue 44): `npm run bench -- --peers [--quick] [--peer-systems=ours,dbos,cf]`.
// The same workflow (10 steps, ~200-byte results, every step fsync'd) on our engine's build
// (SQLite, durability full), DBOS Transact for TypeScript on a Postgres this bench starts
// (bench/lib/postgres.ts), and Cloudflare Workflows in miniflare (workerd, persisted to disk).
// Every measurement is a fresh child process on a fresh store (bench/peers/*-child.mjs, shapes
// in bench/peers/shapes.mjs), repetitions alternate the systems (rotating order), and each
// ratio is ours against theirs within one repetition, reported as median (min–max).
// The peers' packages are pinned in bench/peers/package.json (own lockfile, outside the root
// package: miniflare brings a ~100 MB workerd) and installed on first use with `npm ci`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCompiled, REPO, spawnCompiled, spawnPlain, stopChild, type Spawned } from './children.ts';
import { findPostgres, startPostgres, type Postgres } from './postgres.ts';
import { rssMiB, treePssMiB, treeRssMiB } from './proc-mem.ts';
import { nowMs } from './stats.ts';

export const PEER_SYSTEMS = ['ours', 'dbos', 'cf'] as const;
export type Sys = (typeof PEER_SYSTEMS)[number];
const PEERS_DIR = join(REPO, 'bench', 'peers');
const SCRIPT: Record<Sys, string> = { ours: 'ours-child.mjs', dbos: 'dbos-child.mjs', cf: 'cf-child.mjs' };

export const peerConfig = (quick: boolean) => quick
  ? {
      reps: 2, warmup: 3, seconds: 2, inFlight: 100, inFlightFallback: 50, oneAtATime: 10, seqSteps: 200, seqFallback: 100,
      fanSteps: 200, fill: { ours: 200, dbos: 200, cf: 100 } as Record<Sys, number>, idleMs: 1000, deadlineMs: 120_000,
    }
  : {
      reps: 5, warmup: 20, seconds: 10, inFlight: 100, inFlightFallback: 50, oneAtATime: 50, seqSteps: 1000, seqFallback: 500,
      // Cloudflare's simulator runs ~90 steps/s here: 10,000 finished runs would take ~20 min to write.
      fanSteps: 1000, fill: { ours: 10_000, dbos: 10_000, cf: 1000 } as Record<Sys, number>, idleMs: 5000, deadlineMs: 300_000,
    };
export type PeerConfig = ReturnType<typeof peerConfig>;

/** One repetition's raw outputs per system: shapes, idle and start children. */
export type Rep = Partial<Record<Sys, { shapes?: Record<string, unknown>; idle?: Record<string, unknown>; start?: Record<string, unknown> }>> & { nodeAloneMiB?: number };

export interface PeerRun {
  cfg: PeerConfig;
  systems: Sys[];
  na: Partial<Record<Sys, string>>;
  versions: Record<string, string>;
  fillMs: Partial<Record<Sys, number>>;
  reps: Rep[];
}

function installedVersion(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** `npm ci --prefix bench/peers` when its node_modules is missing; a string says why not. */
function ensurePeerPackages(log: (s: string) => void): string | undefined {
  const need = ['@dbos-inc/dbos-sdk', 'miniflare'].filter((p) => !existsSync(join(PEERS_DIR, 'node_modules', p, 'package.json')));
  if (!need.length) return undefined;
  log(`peers: bench/peers/node_modules lacks ${need.join(', ')}: running npm ci --prefix bench/peers (pinned versions, ~190 MB with workerd; once)`);
  try {
    execFileSync('npm', ['ci', '--prefix', PEERS_DIR, '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 900_000 });
    return undefined;
  } catch (err) {
    return `npm ci --prefix bench/peers failed: ${String((err as Error).message).split('\n')[0]}`;
  }
}

async function child(sys: Sys, args: Record<string, unknown>, timeoutMs: number, env: NodeJS.ProcessEnv, onReady?: (s: Spawned) => void): Promise<Record<string, unknown>> {
  const s = spawnPlain(join(PEERS_DIR, SCRIPT[sys]), args, env);
  try {
    const out = await s.nextJson(timeoutMs);
    if (typeof out.error === 'string') throw new Error(`${sys} ${String(args.mode)}: ${out.error}`);
    onReady?.(s);
    return out;
  } finally {
    // A child that is done closes its system and exits by itself: a SIGTERM at once would cut
    // that close short, and the next start on the same store (the start-up rows) would then
    // be a start after a crash. Only an idle child waits for the signal.
    if (args.mode !== 'idle') await Promise.race([s.exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
    await stopChild(s, 30_000);
  }
}

/** Node alone, built and idle: the floor the idle rows subtract. */
async function nodeAlone(idleMs: number): Promise<number> {
  const s = spawnCompiled('child-idle.ts', { mode: 'bare', idleMs });
  try {
    await s.nextJson(60_000);
    return rssMiB(s.child.pid!);
  } finally {
    await stopChild(s);
  }
}

export async function benchPeers(o: { quick: boolean; root: string; log: (s: string) => void; only?: Set<string> }): Promise<PeerRun> {
  const cfg = peerConfig(o.quick);
  const { log } = o;
  const systems: Sys[] = PEER_SYSTEMS.filter((s) => !o.only || o.only.has(s));
  const na: PeerRun['na'] = {};
  const refuse = (s: Sys, why: string) => {
    na[s] = why;
    log(`peers: ${s === 'dbos' ? 'DBOS' : s === 'cf' ? 'Cloudflare' : 'ours'} rows n/a: ${why}`);
  };
  // Preflight first, so a missing piece is one line before any minute is spent.
  const pg = systems.includes('dbos') ? findPostgres() : undefined;
  if (typeof pg === 'string') refuse('dbos', pg);
  if (systems.some((s) => s !== 'ours' && !na[s])) {
    const why = ensurePeerPackages(log);
    if (why) for (const s of systems) if (s !== 'ours' && !na[s]) refuse(s, why);
  }
  const run0 = { cfg, systems, na, fillMs: {}, reps: [] };
  if (systems.every((s) => na[s])) return { ...run0, versions: {} };
  ensureCompiled();
  const versions: Record<string, string> = {
    dbos: installedVersion('@dbos-inc/dbos-sdk'), miniflare: installedVersion('miniflare'),
    workerd: installedVersion('@cloudflare/workerd-linux-64'), node: process.version,
  };
  const run: PeerRun = { ...run0, versions };
  let server: Postgres | undefined;
  try {
    if (pg && typeof pg !== 'string' && !na.dbos) {
      try {
        server = await startPostgres(pg, log);
        versions.postgres = pg.version;
      } catch (err) {
        refuse('dbos', `postgres did not start: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    const live = systems.filter((s) => !na[s]);
    let dbN = 0;
    /** A fresh store per child: a data dir, a database, a persist dir. */
    const store = (s: Sys, tag: string) => s === 'dbos' ? server!.url(`peers_${tag}_${dbN++}`) : mkdtempSync(join(o.root, `${s}-${tag}-`));
    // miniflare writes its scratch files under TMPDIR: keep them in the bench's temp root.
    const env = (s: Sys): NodeJS.ProcessEnv => (s === 'cf' ? { TMPDIR: mkdtempSync(join(o.root, 'cf-tmp-')) } : {});
    const common = { deadlineMs: cfg.deadlineMs };
    const cpuPids = (s: Sys) => (s === 'dbos' ? [server!.pid] : []);

    // Start-up with history: one store per system, filled once, opened fresh by each repetition.
    const filled: Partial<Record<Sys, string>> = {};
    for (const s of live) {
      const st = store(s, 'fill');
      try {
        const out = await child(s, { ...common, mode: 'fill', store: st, n: cfg.fill[s], inFlight: s === 'cf' ? cfg.inFlightFallback : cfg.inFlight, deadlineMs: cfg.deadlineMs * 4 }, cfg.deadlineMs * 4 + 60_000, env(s));
        filled[s] = st;
        run.fillMs[s] = out.ms as number;
        log(`peers: ${s} filled ${cfg.fill[s]} finished runs in ${((out.ms as number) / 1000).toFixed(1)} s`);
      } catch (err) {
        log(`peers: ${s} fill failed: ${(err as Error).message}`);
      }
    }

    for (let r = 0; r < cfg.reps; r++) {
      const rep: Rep = {};
      run.reps.push(rep);
      const order = live.map((_, i) => live[(i + r) % live.length]!);
      for (const s of order) rep[s] = {};
      const guard = async (s: Sys, kind: 'shapes' | 'idle' | 'start', fn: () => Promise<Record<string, unknown>>) => {
        const t0 = nowMs();
        try {
          rep[s]![kind] = await fn();
        } catch (err) {
          rep[s]![kind] = { na: (err as Error).message.split('\n')[0] };
        }
        log(`peers rep ${r + 1}/${cfg.reps} ${s} ${kind} (${((nowMs() - t0) / 1000).toFixed(1)} s): ${JSON.stringify(rep[s]![kind])}`);
      };
      for (const s of order) {
        await guard(s, 'shapes', () => child(s, {
          ...common, mode: 'shapes', store: store(s, `r${r}`), warmup: cfg.warmup, inFlight: cfg.inFlight, seconds: cfg.seconds,
          oneAtATime: cfg.oneAtATime, seqSteps: cfg.seqSteps, fanSteps: cfg.fanSteps, cpuPids: cpuPids(s),
          ...(s === 'cf' ? { inFlightFallback: cfg.inFlightFallback, seqFallback: cfg.seqFallback } : {}),
        }, cfg.deadlineMs * 6, env(s)));
      }
      rep.nodeAloneMiB = await nodeAlone(cfg.idleMs).catch(() => undefined);
      for (const s of order) {
        await guard(s, 'idle', async () => {
          let rss = NaN;
          let pgPss = NaN;
          const out = await child(s, { ...common, mode: 'idle', store: store(s, `idle${r}`), idleMs: cfg.idleMs }, 120_000 + cfg.idleMs, env(s), (c) => {
            rss = treeRssMiB(c.child.pid!);
            // The Postgres server's share, proportional (PSS: its shared buffers counted once).
            if (s === 'dbos') pgPss = treePssMiB(cpuPids(s)[0]!);
          });
          return { ...out, rssMiB: rss, ...(s === 'dbos' ? { serverPssMiB: pgPss } : {}) };
        });
      }
      for (const s of order) {
        if (!filled[s]) continue;
        await guard(s, 'start', () => child(s, { ...common, mode: 'start', store: filled[s] }, 180_000, env(s)));
      }
    }
  } finally {
    await server?.stop();
    if (server) log(`peers: postgres pid ${server.pid} stopped`);
  }
  return run;
}
