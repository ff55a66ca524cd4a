// `tranquil serve`: the headless host. Loads the project's workflows, starts the engine
// (scheduler, inbox, webhook listener) and the control endpoint, prints where it listens,
// and runs until SIGINT/SIGTERM. Shutdown closes the listeners, then stops the engine:
// in-flight step bodies are abandoned at a commit boundary (their runs are replayed by the
// next owner with the same idempotency keys) and the owner lease is released. If shutdown
// takes longer than the grace bound, the process exits anyway; nothing acknowledged is lost
// because every acknowledgement followed a durable commit.
//
// A second serve on the same data dir refuses to start (the SQLite owner lease), with a
// message naming the pid that owns it. It does not wait as a standby.
import { existsSync, statSync } from 'node:fs';
import { createEngine } from '../compose/index.ts';
import type { EngineConfig } from '../compose/config.ts';
import { DataDirInUseError, StorageError } from '../src/domain/errors.ts';
import { servePanel } from '../src/adapters/http/panel.ts';
import { onFailure } from './serve-notify.ts';
import type { Project } from './project.ts';

export async function serve(project: Project, o: { json: boolean; graceMs: number; panel?: { port: number }; metrics?: { port: number }; onFailure?: { exec?: string; post?: string } }): Promise<number> {
  const out = (human: string, data: Record<string, unknown>) => console.log(o.json ? JSON.stringify(data) : human);
  // The control channel (serve.json) opens with the engine, once it owns the data dir.
  // The config file (a token or key may sit in it) is never a workflow file's to read.
  const config = project.source && existsSync(project.source) && statSync(project.source).isFile() ? [project.source] : [];
  const deno = { ...(project.engine.deno as object | undefined), protect: [...((project.engine.deno as { protect?: string[] } | undefined)?.protect ?? []), ...config] };
  // Prometheus metrics (docs/observability.md) unless the config turns telemetry off or
  // names its own meter provider (the app then exports them its own way).
  const given = project.engine.telemetry as EngineConfig['telemetry'];
  // Loaded only here: the SDK and exporter are not for every CLI command to load.
  const prom = o.metrics && given !== false && given?.meterProvider === undefined ? (await import('../src/adapters/otel/prometheus.ts')).prometheusMetrics() : undefined;
  const telemetry = prom ? { ...(given ?? {}), meterProvider: prom.meterProvider } : given;
  const engine = await createEngine({ ...project.engine, deno, dataDir: project.dataDir, workflows: project.workflows, control: true, ...(telemetry === undefined ? {} : { telemetry }) });
  try {
    await engine.start();
  } catch (err) {
    if (err instanceof DataDirInUseError) {
      throw new StorageError(`refusing to serve ${project.dataDir}: ${err.message}`);
    }
    throw err;
  }
  // The Runs panel (docs/panel.md), on by default; --no-panel leaves it out.
  const panel = o.panel ? await servePanel(engine, { port: o.panel.port }).catch(async (err) => {
    await engine.stop();
    throw err;
  }) : undefined;

  const metrics = prom && o.metrics ? await prom.listen('127.0.0.1', o.metrics.port).catch(async (err) => {
    await panel?.close();
    await engine.stop();
    throw err;
  }) : undefined;

  onFailure(engine, o.onFailure ?? {});

  // Every registered workflow: in-process ones and workflow files (as their Deno child with
  // no permission described them; files are never imported here).
  const registered = engine.registry.all().map((w) => w.definition);
  const hooks: Record<string, string> = {};
  const addr = engine.webhookAddress;
  // No listener (config webhook.listen: false): no URL of ours to print.
  for (const w of addr ? registered : []) {
    if (w.triggers.some((t) => t.type === 'webhook')) hooks[w.name] = await engine.webhookUrl(w.name);
  }
  const control = engine.controlAddress!;
  out(`tranquil serve: pid ${process.pid}, data dir ${project.dataDir}, ${registered.length} workflow(s)`, {
    event: 'ready', pid: process.pid, dataDir: project.dataDir, workflows: registered.map((w) => w.name),
    webhook: addr ?? null, hooks, control: { host: control.host, port: control.port }, panel: panel?.url ?? null, metrics: metrics?.url ?? null,
  });
  if (!o.json) {
    if (addr) console.log(`tranquil serve: webhooks on http://${addr.host}:${addr.port}`);
    for (const [name, url] of Object.entries(hooks)) console.log(`  hook ${name}: ${url}`);
    console.log(`tranquil serve: control on ${control.host}:${control.port} (token in ${project.dataDir}/serve.json)`);
    if (panel) console.log(`tranquil serve: Runs panel on ${panel.url}`);
    if (metrics) console.log(`tranquil serve: Prometheus metrics on ${metrics.url}`);
    console.log('tranquil serve: ready (Ctrl-C to stop)');
  }

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  out(`tranquil serve: ${signal}, stopping`, { event: 'stopping', signal });
  const bound = setTimeout(() => {
    console.error(`tranquil serve: did not stop within ${o.graceMs}ms; exiting (unfinished runs resume on the next start)`);
    process.exit(1);
  }, o.graceMs);
  await panel?.close();
  await metrics?.close();
  await engine.stop(); // closes the control channel first
  await prom?.shutdown();
  clearTimeout(bound);
  out('tranquil serve: stopped', { event: 'stopped' });
  return 0;
}
