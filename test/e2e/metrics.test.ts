// `tranquil serve`'s /metrics (docs/observability.md) as a real process: the Prometheus text
// after a webhook run, then a real Prometheus server (Debian's `prometheus`) scraping it and
// answering a query through its own HTTP API. Every process is stopped by its PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needs } from '../needs.ts';
import { until, whenReady } from './ready-child.ts';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = tranquilCli();
const CONFIG = join(ROOT, 'test/e2e/fixtures/tranquil.config.ts');
const need = needs('prometheus');

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Ready {
  metrics: string;
  hooks: Record<string, string>;
}

/** A serve on a fresh data dir, with one webhook run finished; its /metrics URL. */
async function serveWithOneRun(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-metrics-'));
  dirs.push(dataDir);
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--no-panel', '--data-dir', dataDir, '--config', CONFIG], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const { ready } = await whenReady<Ready>(child, children, 'serve', (m) => (m.event === 'ready' ? (m as unknown as Ready) : undefined));
  expect(ready.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const hook = await fetch(ready.hooks['signup-hook']!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com' }) });
  expect(hook.status).toBe(202);
  return ready.metrics;
}

/** A sample line of `metric` carrying every label in `labels` (in any order), with `value`. */
const sample = (metric: string, labels: Record<string, string>, value: string) =>
  new RegExp(`^${metric}\\{${Object.entries(labels).map(([k, v]) => `(?=[^}]*\\b${k}="${v}")`).join('')}[^}]*\\} ${value.replace('.', '\\.')}$`, 'm');
const FINISHED = sample('tranquil_runs_finished_total', { tranquil_workflow: 'signup-hook', tranquil_run_status: 'succeeded' }, '1');

describe('tranquil serve /metrics', () => {
  it('answers the Prometheus text format on loopback: runs, attempts, step durations, runs by status now', async () => {
    const url = await serveWithOneRun();
    // The finished counter moves when the run's code ends; the gauges follow once its outcome
    // is written (executing) and committed (runs by status): wait until all three agree.
    const IDLE = sample('tranquil_runs_executing', {}, '0');
    const RUNNING = sample('tranquil_runs_current', { tranquil_run_status: 'running' }, '[1-9]\\d*');
    const text = await until('the finished run in /metrics', async () => {
      const t = await (await fetch(url)).text();
      return FINISHED.test(t) && IDLE.test(t) && !RUNNING.test(t) ? t : undefined;
    });
    expect(text).toMatch(sample('tranquil_runs_started_total', { tranquil_workflow: 'signup-hook' }, '1'));
    expect(text).toMatch(sample('tranquil_step_attempts_total', { tranquil_step_name: 'store', tranquil_step_outcome: 'succeeded' }, '1'));
    expect(text).toMatch(sample('tranquil_step_duration_count', { tranquil_step_name: 'store' }, '1'));
    // Buckets in seconds: a step of well under a second is in the 1 s bucket, not only in +Inf.
    expect(text).toMatch(sample('tranquil_step_duration_bucket', { tranquil_step_name: 'store', le: '1' }, '1'));
    const res = await fetch(url);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    await res.text();
    expect((await fetch(url.replace(/\/metrics$/, '/other'))).status).toBe(404);
  });

  describe.skipIf(!need.programs.prometheus)(`scraped by a real Prometheus${need.skipReason ? ` [skipped: ${need.skipReason}]` : ''}`, need.options, () => {
    it('Prometheus scrapes serve and its query API returns the finished run', async () => {
      const target = new URL(await serveWithOneRun());
      const dir = mkdtempSync(join(tmpdir(), 'tranquil-prometheus-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'prometheus.yml'), [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: tranquil',
        `    metrics_path: ${target.pathname}`,
        '    static_configs:',
        `      - targets: ['${target.host}']`,
        '',
      ].join('\n'));
      const port = await freePort();
      const prom = spawn(need.programs.prometheus!, [
        `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(prom);
      let stderr = '';
      prom.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
      const query = `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent('tranquil_runs_finished_total{tranquil_workflow="signup-hook",tranquil_run_status="succeeded"}')}`;
      const result = await until('Prometheus to have scraped the run', async () => {
        if (prom.exitCode !== null) throw new Error(`prometheus exited (${prom.exitCode}): ${stderr}`);
        const r = await fetch(query).catch(() => undefined);
        if (!r?.ok) return undefined;
        const body = (await r.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
        return body.data.result.length > 0 ? body.data.result : undefined;
      }, 1500);
      expect(result).toHaveLength(1);
      expect(result[0]!.value[1]).toBe('1');
      expect(result[0]!.metric.job).toBe('tranquil');
    });
  });
});

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}
