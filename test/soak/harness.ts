// Runs the soak: starts the engine in a child (engine-child.ts), drives the webhook and polls
// the Runs panel from outside it over HTTP, samples the child from /proc (RSS, fds) and the
// data dir (WAL, file size) beside the child's own figures (heap, timers, handles, lag),
// then stops the load, waits for every run to finish, and checks the workload:
// every started run finished exactly once, nothing is left live or failed, every webhook
// delivery was taken (redeliveries answered with the first run), the panel answered.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { rssMiB, statusField } from '../../bench/lib/proc-mem.ts';
import { removeDataDir } from '../restate/data-dir.ts';
import { BOUNDS, type Sample } from './metrics.ts';
import { checkGrowth, type GrowthVerdict } from './slope.ts';

export interface SoakOptions {
  backend: 'sqlite' | 'restate';
  /** How long the load runs (the drain after it is extra). */
  minutes: number;
  sampleMs?: number;
  /** Longest wait, after the load stops, for the last runs to finish. */
  drainMs?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  backend: string;
  minutes: number;
  sampleMs: number;
  samples: Sample[];
  verdicts: GrowthVerdict[];
  workload: {
    started: number;
    finished: number;
    byKind: Record<string, number>;
    missing: string[];
    doubled: string[];
    unexpected: string[];
    left: { runId: string; workflow: string; status: string; createdAt: string }[];
    scheduleRuns: number;
    scheduleExpected: number;
    webhookPosts: number;
    webhookRedeliveries: number;
    webhookBad: string[];
    panelPolls: number;
    panelBad: string[];
    childErrors: string[];
    exitCode: number | null;
  };
  /** Every check, true when it held. */
  ok: { growth: boolean; workload: boolean };
}

const MiB = 2 ** 20;
const fileMiB = (p: string) => (existsSync(p) ? statSync(p).size / MiB : 0);
function dirMiB(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      try {
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) total += statSync(p).size;
      } catch { /* removed meanwhile */ }
    }
  };
  walk(dir);
  return total / MiB;
}
const fdCount = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const sampleMs = o.sampleMs ?? 10_000;
  const drainMs = o.drainMs ?? 120_000;
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), `tranquil-soak-${o.backend}-`));
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, 'engine-child.ts')], {
    env: { ...process.env, SOAK_BACKEND: o.backend, SOAK_DATA_DIR: dir, SOAK_SAMPLE_MS: String(sampleMs) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  const started = new Map<string, string>();
  const done = new Map<string, number>();
  const doneKind = new Map<string, string>();
  const byKind: Record<string, number> = {};
  const samples: Sample[] = [];
  const childErrors: string[] = [];
  let t0: number | undefined;
  let ready: { pid: number; webhook: string; panel: string } | undefined;
  const waiters = new Map<string, (msg: Record<string, unknown>) => void>();
  const restatePidFile = join(dir, 'restate', 'server.pid');

  createInterface({ input: child.stdout! }).on('line', (line) => {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const ev = msg.event as string;
    if (ev === 'start') started.set(msg.runId as string, msg.kind as string);
    else if (ev === 'done') {
      const id = msg.runId as string;
      done.set(id, (done.get(id) ?? 0) + 1);
      doneKind.set(id, msg.kind as string);
      byKind[msg.kind as string] = (byKind[msg.kind as string] ?? 0) + 1;
    } else if (ev === 'error') childErrors.push(`${msg.what}: ${msg.message}`);
    else if (ev === 'sample' && ready) {
      const at = msg.at as number;
      t0 ??= at;
      const restatePid = existsSync(restatePidFile) ? Number(readFileSync(restatePidFile, 'utf8')) : undefined;
      const s: Sample = {
        t: (at - t0) / 1000,
        rssMiB: rssMiB(ready.pid),
        heapUsedMiB: msg.heapUsedMiB as number,
        fds: fdCount(ready.pid),
        walMiB: fileMiB(join(dir, 'tranquil.db-wal')),
        dbMiB: fileMiB(join(dir, 'tranquil.db')),
        timers: msg.timers as number,
        handles: msg.handles as number,
        lagP99Ms: msg.lagP99Ms as number,
        lagMaxMs: msg.lagMaxMs as number,
        rssAnonMiB: statusField(ready.pid, 'RssAnon'),
        rssFileMiB: statusField(ready.pid, 'RssFile'),
        rssShmemMiB: statusField(ready.pid, 'RssShmem'),
        heapTotalMiB: msg.heapTotalMiB as number,
        externalMiB: msg.externalMiB as number,
        arrayBuffersMiB: msg.arrayBuffersMiB as number,
        ...(restatePid ? { restateRssMiB: rssMiB(restatePid), restateDirMiB: dirMiB(join(dir, 'restate')) } : {}),
        started: started.size,
        finished: done.size,
      };
      if (sampling) samples.push(s);
      log(`t=${s.t.toFixed(0)}s rss=${s.rssMiB.toFixed(1)} heap=${s.heapUsedMiB.toFixed(1)} fds=${s.fds} timers=${s.timers} handles=${s.handles} wal=${s.walMiB.toFixed(2)} db=${s.dbMiB.toFixed(2)} lagP99=${s.lagP99Ms.toFixed(1)}ms anon=${s.rssAnonMiB!.toFixed(1)} file=${s.rssFileMiB!.toFixed(1)} shmem=${s.rssShmemMiB!.toFixed(1)} heapTotal=${s.heapTotalMiB!.toFixed(1)} ext=${s.externalMiB!.toFixed(1)} runs ${s.finished}/${s.started}${s.restateRssMiB ? ` restate rss=${s.restateRssMiB.toFixed(0)} dir=${s.restateDirMiB!.toFixed(1)}` : ''}`);
    }
    if (ev === 'ready') ready = msg as typeof ready;
    waiters.get(ev)?.(msg);
  });
  const next = (ev: string, ms: number) =>
    new Promise<Record<string, unknown>>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`soak child: no '${ev}' in ${ms} ms; stderr: ${stderr.slice(-2000)}`)), ms);
      waiters.set(ev, (m) => (clearTimeout(timer), waiters.delete(ev), ok(m)));
      void exit.then((code) => fail(new Error(`soak child exited (${code}) before '${ev}': ${stderr.slice(-2000)}`)));
    });
  const send = (cmd: string) => child.stdin!.write(`${cmd}\n`);

  let sampling = true;
  let loading = true;
  try {
    await next('ready', 120_000);
    const { webhook, panel } = ready!;
    const loadStart = Date.now();

    // Webhook deliveries from outside, one a second; every 10th redelivers the previous key,
    // which must answer with the first delivery's run and start nothing.
    const webhookBad: string[] = [];
    let webhookPosts = 0;
    let webhookRedeliveries = 0;
    const byKey = new Map<string, string>();
    const post = async (key: string) => {
      const res = await fetch(webhook, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ key }) });
      const body = (await res.json()) as { runId: string; created: boolean };
      if (res.status !== 202) return webhookBad.push(`${key}: HTTP ${res.status}`);
      const first = byKey.get(key);
      if (first === undefined) {
        if (!body.created) webhookBad.push(`${key}: first delivery answered created: false`);
        byKey.set(key, body.runId);
        // The harness, not the child, keeps the ids; old keys are forgotten (bounded map).
        if (byKey.size > 50) byKey.delete(byKey.keys().next().value!);
        started.set(body.runId, 'webhook');
      } else if (body.created || body.runId !== first) webhookBad.push(`${key}: redelivery started ${body.runId} (first ${first})`);
      else webhookRedeliveries++;
    };
    const hooks = (async () => {
      for (let i = 0; loading; i++) {
        const t = Date.now();
        await post(`k-${i}`).catch((e) => webhookBad.push(`k-${i}: ${String(e)}`));
        webhookPosts++;
        if (i % 10 === 9) await post(`k-${i - 1}`).catch((e) => webhookBad.push(`k-${i - 1} again: ${String(e)}`));
        await sleep(Math.max(0, 1000 - (Date.now() - t)));
      }
    })();

    // The Runs panel polled the way its pages refresh (fragment requests), pages in turn.
    const panelBad: string[] = [];
    let panelPolls = 0;
    const polls = (async () => {
      for (let i = 0; loading; i++) {
        const recent = [...started.keys()].at(-1);
        const path = ['', 'schedules', 'events', recent ? `runs/${recent}` : ''][i % 4];
        try {
          const res = await fetch(new URL(path!, panel), { headers: i % 2 ? { 'x-panel-fragment': '1' } : {} });
          await res.text();
          if (res.status !== 200) panelBad.push(`/${path}: HTTP ${res.status}`);
        } catch (e) {
          panelBad.push(`/${path}: ${String(e)}`);
        }
        panelPolls++;
        await sleep(500);
      }
    })();

    await Promise.race([sleep(o.minutes * 60_000), exit.then((c) => { throw new Error(`soak child exited (${c}) during the load: ${stderr.slice(-2000)}`); })]);
    sampling = false;
    loading = false;
    await Promise.all([hooks, polls]);
    send('stop-load');
    const stoppedAt = (await next('load-stopped', 60_000)).at as number;
    const loadSeconds = (stoppedAt - loadStart) / 1000;

    // Drain: every started run must finish (the slowest path is a 1.5 s sleep and a retry).
    const deadline = Date.now() + drainMs;
    const missingNow = () => [...started.keys()].filter((id) => !done.has(id));
    while (missingNow().length > 0 && Date.now() < deadline) await sleep(250);
    send('final');
    const final = await next('final', 60_000);
    send('exit');
    await next('stopped', 60_000).catch(() => {});
    const exitCode = await Promise.race([exit, sleep(30_000).then(() => null)]);

    const left = (final.left as SoakResult['workload']['left'])
      // A schedule slot that fired after the load stopped may still be running: not stuck.
      .filter((r) => !(r.workflow === 'soak-cron' && Date.parse(r.createdAt) > Date.now() - 15_000));
    const scheduleRuns = byKind.schedule ?? 0;
    const workload: SoakResult['workload'] = {
      started: started.size,
      finished: done.size,
      byKind,
      missing: missingNow().slice(0, 50),
      doubled: [...done].filter(([, c]) => c > 1).map(([id]) => id).slice(0, 50),
      unexpected: [...done.keys()].filter((id) => !started.has(id) && doneKind.get(id) !== 'schedule').slice(0, 50),
      left,
      scheduleRuns,
      scheduleExpected: Math.floor(loadSeconds / 5),
      webhookPosts,
      webhookRedeliveries,
      webhookBad: webhookBad.slice(0, 50),
      panelPolls,
      panelBad: panelBad.slice(0, 50),
      childErrors: childErrors.slice(0, 50),
      exitCode,
    };
    const verdicts = BOUNDS.map((b) => checkGrowth(samples.map((s) => ({ t: s.t, v: s[b.metric as keyof Sample] as number })), b));
    const workloadOk =
      workload.missing.length === 0 && workload.doubled.length === 0 && workload.unexpected.length === 0 && left.length === 0 &&
      // Slots are every 5 s; allow two lost at the edges of the load window.
      scheduleRuns >= workload.scheduleExpected - 2 &&
      webhookBad.length === 0 && panelBad.length === 0 && childErrors.length === 0 && exitCode === 0 && webhookRedeliveries > 0;
    return {
      backend: o.backend,
      minutes: o.minutes,
      sampleMs,
      samples,
      verdicts,
      workload,
      ok: { growth: verdicts.every((v) => v.pass), workload: workloadOk },
    };
  } finally {
    loading = false;
    if (child.exitCode === null) stop(child);
    await Promise.race([exit, sleep(10_000)]);
    removeDataDir(dir);
  }
}

function stop(child: ChildProcess): void {
  try {
    child.kill('SIGKILL');
  } catch { /* gone */ }
}
