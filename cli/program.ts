// The `tranquil` CLI (commander); cli/main.ts is the entry that runs it. Reading commands
// read runs through the backend's RunReader (compose/run-reader.ts: the SQLite file
// read-only, or Restate's admin API) and trigger state (events, schedules) from the data
// dir's file read-only; mutating commands go to a running `serve` over its control
// endpoint, or, when none runs, start an engine in-process on the data dir, apply the
// command, let the work settle (bounded) and stop. Every command takes --json and
// --data-dir; bad input exits 1 with one line.
import { controlCommands, workflowPauseCommands } from './control.ts';
import { liveOutputCommands } from './live-output.ts';
import { explainWorkflowPause, type WorkflowPause } from '../src/domain/workflow-pause.ts';
import { describeQueueWait } from '../src/domain/rate-limit.ts';
import { readQueueRows } from '../compose/queue-reader.ts';
import { readBursts } from '../compose/burst-reader.ts';
import { burstLine, burstView, explainBurst, type PendingBurst } from '../src/domain/debounce-burst.ts';
import { listedQueues, queueLine } from '../src/domain/internal-queues.ts';
import { Command, Option } from 'commander';
import * as z from 'zod';
import { createEngine } from '../compose/index.ts';
import { resolveConfig } from '../compose/config.ts';
import { openRunReader } from '../compose/run-reader.ts';
import { openTriggerReader, type TriggerReader } from '../compose/trigger-reader.ts';
import { payloadCodecFor } from '../compose/codec.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import type { RunReader } from '../src/ports/run-reader.ts';
import { UnknownRunError, ValidationError } from '../src/domain/errors.ts';
import { explain, skippedBy, type EngineContext, type Explanation } from '../src/domain/explain.ts';
import { explainWaitingParent } from '../src/runtime/child-runs.ts';
import { readOwner } from '../src/adapters/sqlite/owner-lease.ts';
import { explainSchedules } from '../src/domain/schedule.ts';
import { RUN_STATUSES } from '../src/domain/run-status.ts';
import type { RunView } from '../src/domain/run-view.ts';
import type { Json } from '../src/domain/json.ts';
import { valueText } from '../src/domain/value-text.ts';
import { publishedState } from '../src/domain/published-state.ts';
import { findServe, sendOp } from '../src/adapters/http/control-client.ts';
import { applyOp, describeApproval, describeRetry, type Op } from './ops.ts';
import { existsSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { RunOutput } from '../src/adapters/sqlite/file-tables.ts';
import { loadProject, type Project, type ProjectOptions } from './project.ts';
import { serve } from './serve.ts';
import { plainCommands } from './plain.ts';
import { installService, printService, serviceStatus, uninstallService, type ServiceReport } from './service.ts';
import { parseLoopbackUrl } from './serve-notify.ts';
import { lifecycleCommands } from './lifecycle.ts';
import { runSandbox } from './sandbox.ts';
import { initCommand } from './init.ts';
import { devCommand } from './dev.ts';
import { describeFiles, describeValidated, describeVersions, listVersions, validateFile } from './workflow-files.ts';

export interface Common extends ProjectOptions {
  json?: boolean;
}

export function common(c: Command): Command {
  return c
    .option('--json', 'machine-readable JSON output')
    .option('--data-dir <dir>', 'data dir (default: config dataDir, $TRANQUIL_DATA_DIR or .tranquil)')
    .option('--config <file>', 'config file exporting { workflows, dataDir?, webhook? } (default: ./tranquil.config.ts)')
    .option('--workflows <dir>', 'directory of workflow files (instead of --config)');
}

function parseJson(text: string | undefined, flag: string): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`${flag}: not valid JSON (${(err as Error).message})`);
  }
}

function parseIntArg(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new ValidationError(`${flag}: expected a non-negative integer, got '${v}'`);
    return n;
  };
}

/** An ISO 8601 instant flag, normalized; undefined when absent. */
function instant(v: string | undefined, flag: string): string | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new ValidationError(`${flag}: expected an ISO 8601 instant, got '${v}'`);
  return new Date(t).toISOString();
}

export function print(o: Common, data: unknown, human: () => string): void {
  console.log(o.json ? JSON.stringify(data) : human());
}

const noData = (project: Project) => new ValidationError(`--data-dir: no Tranquil data in ${project.dataDir}`);

/** Events and schedules from where the engine keeps them (compose/trigger-reader.ts). */
async function triggerReader(project: Project): Promise<TriggerReader> {
  const reader = await openTriggerReader(resolveConfig({ ...project.engine, dataDir: project.dataDir }));
  if (!reader) throw noData(project);
  return reader;
}

/** Whether an engine owns the data dir (the SQLite file's owner row), for `why` of a run
 *  that needs one; undefined when there is no file to ask. */
function engineContext(project: Project): EngineContext | undefined {
  const data = ReadOnlyFile.open(project.dataDir);
  if (!data) return undefined;
  try {
    return readOwner(data.db);
  } finally {
    data.close();
  }
}

/** The data dir's pending debounce bursts (none when nothing was stored). */
async function burstsOf(project: Project, filter: { workflow?: string; runId?: string }): Promise<PendingBurst[]> {
  return (await readBursts(resolveConfig({ ...project.engine, dataDir: project.dataDir }), filter)) ?? [];
}

/** The payload codec the project's config (or env) names: the file is read through it. */
const codecOf = (project: Project) => payloadCodecFor(resolveConfig({ ...project.engine, dataDir: project.dataDir }));

/** The data dir's trigger state (events, schedules), read-only. */
function readOnly(project: Project): ReadOnlyFile {
  const data = ReadOnlyFile.open(project.dataDir, codecOf(project));
  if (!data) throw noData(project);
  return data;
}

/** The paused workflows as the project's backend keeps them (none when nothing was stored). */
async function pausedWorkflows(project: Project): Promise<WorkflowPause[]> {
  const reader = await openRunReader(resolveConfig({ ...project.engine, dataDir: project.dataDir }), {});
  if (!reader) return [];
  try {
    return (await reader.workflowPauses?.()) ?? [];
  } finally {
    await reader.close();
  }
}

/** Runs as the project's backend sees them (TRANQUIL_BACKEND or the config's `backend`). */
export async function withRuns<T>(project: Project, fn: (reader: RunReader) => Promise<T>): Promise<T> {
  const config = resolveConfig({ ...project.engine, dataDir: project.dataDir });
  // Workflow files' names are known only by describing them: no name filter then.
  const names = project.source && project.workflowFiles.length === 0 ? project.workflows.map((w) => w.name) : undefined;
  const reader = await openRunReader(config, { workflows: names });
  if (!reader) throw noData(project);
  try {
    return await fn(reader);
  } finally {
    await reader.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends a mutation to the running serve, or applies it with an in-process engine. */
/** Who a cancel from the CLI is recorded as: `cli (<user>@<host>)` (`cli` alone when the
 *  user cannot be read, e.g. a uid with no passwd entry). */
export function cliAsker(): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER;
  }
  const who = `${user ?? '?'}@${hostname()}`.replace(/\p{Cc}/gu, '');
  return user ? `cli (${who})`.slice(0, 200) : 'cli';
}

export async function mutate(o: Common, op: Op, waitMs = 30_000): Promise<unknown> {
  const project = await loadProject(o);
  const running = findServe(project.dataDir);
  if (running) return sendOp(running, op);
  if (!project.source) {
    // Without the workflows an in-process engine would mark their runs blocked.
    throw new ValidationError(`no serve is running for ${project.dataDir} and no workflows were given: pass --config <file> or --workflows <dir>`);
  }
  // A one-shot engine: no control channel of its own even if the project's config asks.
  const engine = await createEngine({ ...project.engine, dataDir: project.dataDir, workflows: project.workflows, control: false });
  await engine.start();
  try {
    const result = await applyOp(engine, op);
    // Let what the command set in motion reach a resting point before this engine stops.
    await Promise.race([engine.executor.idle(), sleep(waitMs)]);
    return result;
  } finally {
    await engine.stop();
  }
}

const shellArg = (v: string) => (/^[A-Za-z0-9_.,:=@%+\/-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/** `tranquil runs list` with the same flags and the next page's cursor. */
function nextListCommand(o: Common & { status?: string; workflow?: string; limit: number; since?: string; until?: string; parent?: string; queue?: string }, cursor: string): string {
  const flags: [string, string | undefined][] = [
    ['--data-dir', o.dataDir], ['--config', o.config], ['--workflows', o.workflows],
    ['--status', o.status], ['--workflow', o.workflow], ['--parent', o.parent], ['--queue', o.queue], ['--since', o.since], ['--until', o.until], ['--limit', String(o.limit)], ['--cursor', cursor],
  ];
  const args = flags.filter(([, v]) => v !== undefined).map(([f, v]) => `${f} ${shellArg(v!)}`);
  return ['tranquil runs list', ...args, ...(o.json ? ['--json'] : [])].join(' ');
}

const runLine = (r: RunView) => `${r.runId}  ${r.workflow}  ${r.status}  ${r.createdAt}${r.heldBy ? `  (${r.heldBy})` : ''}${r.queued ? `  ${r.queued.step === '' ? '' : `step '${r.queued.step}' `}${describeQueueWait(r.queued)}` : ''}`;

/** A workflow file's run: its last Deno child's pid, exit and output (bounded), if kept. */
const indent = (text: string) => text.replace(/\n$/, '').split('\n').map((l) => `    ${l}`).join('\n');

function describeRun(r: RunView, child?: RunOutput): string {
  const skip = skippedBy(r);
  const lines = [`${r.runId}  workflow ${r.workflow}@${r.version}  ${r.status}${skip ? ` (outcome skipped: '${skip.condition}' of step '${skip.step}' was false)` : ''}`, `  created ${r.createdAt}, updated ${r.updatedAt}${r.wakeAt ? `, wakes ${r.wakeAt}` : ''}`];
  if (r.heldBy) lines.push(`  held by ${r.heldBy === 'sqlite' ? 'the SQLite backend of this data dir (started before the switch to Restate; it finishes there)' : 'Restate'}`);
  // Readable (a Map as its entries, a Date as ISO); --json keeps the stored form (lossless).
  lines.push(`  input ${valueText(r.input)}`);
  if (r.output !== undefined) lines.push(`  output ${valueText(r.output)}`);
  if (r.error) lines.push(`  error ${r.error.name}: ${r.error.message}`);
  if (r.cancel) lines.push(`  cancelled by ${r.cancel.by} at ${r.cancel.at}`);
  if (r.parent) lines.push(`  child of run ${r.parent.runId}, step '${r.parent.step}' (depth ${r.parent.depth}; on parent cancel: ${r.parent.onParentCancel})`);
  if (r.rerunOf) lines.push(r.forkedFrom ? `  fork of run ${r.rerunOf} from step '${r.forkedFrom.name}' (position ${r.forkedFrom.seq})` : `  rerun of run ${r.rerunOf}`);
  if (r.reruns?.length) lines.push(`  rerun or forked as ${r.reruns.map((id) => `run ${id}`).join(', ')}`);
  for (const c of r.children ?? []) lines.push(`  child run ${c.runId}  ${c.workflow}  ${c.status}  (step '${c.step}')`);
  for (const p of publishedState(r.steps)) lines.push(`  state '${p.key}' ${valueText(p.value)}${p.publishedAt ? ` (published ${p.publishedAt})` : ''}`);
  for (const s of r.steps) lines.push(`  [${s.seq}] ${s.kind} '${s.name}' ${s.status} (attempts ${s.attempts}${s.retryLimit !== undefined ? ` of ${s.retryLimit}` : ''})`);
  if (child) {
    lines.push(`  last Deno child: pid ${child.pid}${child.exit ? `, exited (${child.exit})` : ''}`);
    lines.push(child.stdout ? `  stdout:\n${indent(child.stdout)}` : '  stdout: (empty)');
    lines.push(child.stderr ? `  stderr:\n${indent(child.stderr)}` : '  stderr: (empty)');
  }
  return lines.join('\n');
}

export function buildProgram(): Command {
  const program = new Command('tranquil').description('Tranquil Engine: durable workflows in one SQLite file').showHelpAfterError(false);

  common(program.command('serve').description('headless host: run schedules, inbox and webhooks until SIGINT/SIGTERM'))
    .addOption(new Option('--grace <ms>', 'shutdown bound in ms').default(10_000).argParser(parseIntArg('--grace')))
    .option('--no-panel', 'do not serve the Runs panel (docs/panel.md)')
    .addOption(new Option('--panel-port <port>', 'the Runs panel\'s port on 127.0.0.1 (default: any free port)').default(0).argParser(parseIntArg('--panel-port')))
    .option('--no-metrics', 'do not serve Prometheus metrics at /metrics (docs/observability.md)')
    .addOption(new Option('--metrics-port <port>', 'the /metrics port on 127.0.0.1 (default: any free port)').default(0).argParser(parseIntArg('--metrics-port')))
    .option('--on-failure-exec <cmd>', 'run this shell command on each run failure (event JSON on stdin, TRANQUIL_RUN_ID etc. in env)')
    .option('--on-failure-post <url>', 'POST each run failure as JSON to this loopback URL')
    .action(async (o: Common & { grace: number; panel: boolean; panelPort: number; metrics: boolean; metricsPort: number; onFailureExec?: string; onFailurePost?: string }) => {
      const onFailure = { exec: o.onFailureExec, post: o.onFailurePost === undefined ? undefined : parseLoopbackUrl(o.onFailurePost) };
      const project = await loadProject(o);
      if (!project.source) throw new ValidationError('serve: no workflows: pass --config <file> or --workflows <dir>, or add tranquil.config.ts');
      process.exitCode = await serve(project, { json: !!o.json, graceMs: o.grace, panel: o.panel ? { port: o.panelPort } : undefined, metrics: o.metrics ? { port: o.metricsPort } : undefined, onFailure });
    });

  common(program.command('run <workflow>').description('start a run and wait until it finishes or suspends'))
    .option('--input <json>', 'run input as JSON')
    .option('--run-id <id>', 'caller run id (a second run with the same id returns the first)')
    .addOption(new Option('--wait <ms>', 'how long to wait for the run to settle').default(30_000).argParser(parseIntArg('--wait')))
    .action(async (workflow: string, o: Common & { input?: string; runId?: string; wait: number }) => {
      const op: Op = { op: 'run', workflow, input: parseJson(o.input, '--input'), runId: o.runId, waitMs: o.wait };
      const r = (await mutate(o, op, o.wait)) as { runId: string; created: boolean; status: string; output?: unknown; error?: { name: string; message: string } };
      print(o, r, () => `${r.runId} ${r.status}${r.output !== undefined ? ` ${valueText(r.output as Json)}` : ''}${r.error ? ` ${r.error.name}: ${r.error.message}` : ''}${r.created ? '' : ' (existing run)'}`);
    });

  common(program.command('emit <event>').description('publish an event (the same --id twice starts nothing new)'))
    .option('--data <json>', 'event payload as JSON')
    .option('--id <id>', 'dedup id')
    .action(async (name: string, o: Common & { data?: string; id?: string }) => {
      const r = (await mutate(o, { op: 'emit', name, data: parseJson(o.data, '--data'), id: o.id })) as { runIds: string[]; duplicate: boolean };
      print(o, r, () => `${r.duplicate ? 'duplicate event; ' : ''}${r.runIds.length ? `runs: ${r.runIds.join(' ')}` : 'no subscriber; event kept'}`);
    });

  common(program.command('signal <runId> <name>').description('send a signal to a run (waitForEvent)'))
    .option('--data <json>', 'signal payload as JSON')
    .action(async (runId: string, name: string, o: Common & { data?: string }) => {
      const r = await mutate(o, { op: 'signal', runId, name, data: parseJson(o.data, '--data') });
      print(o, r, () => `signal '${name}' delivered to ${runId}`);
    });

  const runs = program.command('runs').description('inspect and manage runs');
  common(runs.command('list').description('runs, newest first, a page at a time (the next page\'s command is printed when there is more)'))
    .option('--status <status>', `one of ${RUN_STATUSES.join(', ')}`)
    .option('--workflow <name>', 'only this workflow')
    .addOption(new Option('--limit <n>', 'at most n runs per page (1..10000)').default(100).argParser(parseIntArg('--limit')))
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .option('--since <instant>', 'only runs created at or after this ISO 8601 instant')
    .option('--until <instant>', 'only runs created at or before this ISO 8601 instant')
    .option('--parent <runId>', 'only the child runs of this run')
    .option('--queue <name>', 'only runs waiting in line in this queue (the run itself or one of its steps)')
    .option('--debounced', 'instead: the debounce bursts collecting now, not runs yet (run id, workflow, key, triggers collected, when each starts; with --workflow: its only)')
    .action(async (o: Common & { status?: string; workflow?: string; limit: number; cursor?: string; since?: string; until?: string; parent?: string; queue?: string; debounced?: boolean }) => {
      if (o.debounced) {
        const bursts = await burstsOf(await loadProject(o), o.workflow === undefined ? {} : { workflow: o.workflow });
        const now = Date.now();
        return print(o, bursts.map(burstView), () => (bursts.length ? bursts.map((b) => burstLine(b, now)).join('\n') : 'no debounce bursts collecting'));
      }
      const status = z.enum(RUN_STATUSES).optional().safeParse(o.status);
      if (!status.success) throw new ValidationError(`--status: expected one of ${RUN_STATUSES.join(', ')}, got '${o.status}'`);
      if (o.limit < 1 || o.limit > 10_000) throw new ValidationError(`--limit: expected 1..10000, got ${o.limit}`);
      if (o.cursor !== undefined && o.cursor.length === 0) throw new ValidationError('--cursor: must not be empty');
      const page = await withRuns(await loadProject(o), (runs) => runs.listRuns({ status: status.data, workflow: o.workflow, limit: o.limit, cursor: o.cursor, since: instant(o.since, '--since'), until: instant(o.until, '--until'), ...(o.parent !== undefined ? { parent: o.parent } : {}), ...(o.queue !== undefined ? { queue: o.queue } : {}) }));
      const more = page.next === undefined ? undefined : `more: ${nextListCommand(o, page.next)}`;
      // --json keeps stdout the plain array it always was; the next page's command goes to stderr.
      print(o, page.runs, () => [page.runs.length ? page.runs.map(runLine).join('\n') : 'no runs', ...(more ? [more] : [])].join('\n'));
      if (o.json && more) console.error(more);
    });
  common(runs.command('describe <runId>').description('a run with its steps'))
    .action(async (runId: string, o: Common) => {
      const project = await loadProject(o);
      // The child output comes from the reader, so it shows on either backend.
      const found = await withRuns(project, async (runs) => {
        const run = await runs.getRun(runId);
        return run && ([run, await runs.childOutput?.(runId)] as const);
      });
      if (!found) {
        // A debounce burst's run id names a run that does not exist yet.
        const [b] = await burstsOf(project, { runId });
        if (!b) throw new UnknownRunError(runId);
        const e = explainBurst(b, Date.now());
        return print(o, e.burst, () => `${burstLine(b, Date.now())}\n  ${e.summary}`);
      }
      const [r, child] = found;
      print(o, child ? { ...r, child } : r, () => describeRun(r, child));
    });
  common(runs.command('cancel <runId>').description('cancel a run')).action(async (runId: string, o: Common) => {
    print(o, await mutate(o, { op: 'cancel', runId, by: cliAsker() }), () => `cancelled ${runId}`);
  });
  common(runs.command('retry <runId>').description('resume a failed run at its earliest failed step (or --from), discarding what was recorded from there'))
    .option('--from <step>', 'resume at this recorded step name instead')
    .action(async (runId: string, o: Common & { from?: string }) => {
      const r = (await mutate(o, { op: 'retry', runId, from: o.from })) as Parameters<typeof describeRetry>[0];
      print(o, r, () => describeRetry(r));
    });

  liveOutputCommands(runs);
  controlCommands(runs);
  lifecycleCommands(program);
  initCommand(program);
  devCommand(program);

  common(program.command('why <runIdOrWorkflow>').description("explain a run, or a scheduled workflow's recent slots"))
    .action(async (id: string, o: Common) => {
      const project = await loadProject(o);
      const now = Date.now();
      const ctx = engineContext(project);
      // A parent waiting for a child names it and says what that child is doing (child-runs.ts).
      let version: string | undefined;
      const runWhy = await withRuns(project, async (runs) => {
        const run = await runs.getRun(id);
        version = run?.version;
        const why = async (v: RunView): Promise<Explanation> => explainWaitingParent(runs, explain(v, now, ctx), why);
        return run && why(run);
      });
      if (runWhy) {
        // A file's run: whether its children are confined by the OS sandbox here.
        const sandbox = runSandbox(project, version);
        const details = sandbox ? [...runWhy.details, sandbox.line] : runWhy.details;
        return print(o, sandbox ? { ...runWhy, sandbox } : runWhy, () => [runWhy.summary, ...details.map((d) => `  ${d}`), `next: ${runWhy.next}`].join('\n'));
      }
      const [burst] = await burstsOf(project, { runId: id });
      if (burst) {
        const e = explainBurst(burst, now);
        return print(o, e, () => [e.summary, `next: ${e.next}`].join('\n'));
      }
      const paused = (await pausedWorkflows(project)).find((p) => p.workflow === id);
      const data = await triggerReader(project);
      let e: ReturnType<typeof explainSchedules> | undefined;
      try {
        const schedules = (await data.listSchedules()).filter((s) => s.workflow === id && s.active);
        if (schedules.length === 0 && !paused) throw new ValidationError(`why: '${id}' is neither a run id nor a scheduled or paused workflow in ${data.where}`);
        if (schedules.length > 0) e = explainSchedules(id, schedules, (await data.listSlots({ workflow: id, limit: 20 })).reverse());
      } finally {
        data.close();
      }
      // A paused workflow says so first (docs/control.md "Pause a workflow").
      const p = paused && explainWorkflowPause(paused);
      const out = p ? { workflow: id, summary: p.summary, details: [...(e ? [e.summary, ...e.details] : []), `next: ${p.next}`], paused } : e!;
      print(o, out, () => [out.summary, ...out.details.map((d) => `  ${d}`)].join('\n'));
    });

  const workflows = program.command('workflows').description('the project\'s workflows');
  common(workflows.command('list').description('workflows with their triggers, hook URLs and next schedule slots'))
    .action(async (o: Common) => {
      const project = await loadProject(o);
      if (!project.source) throw new ValidationError('workflows list: no workflows: pass --config <file> or --workflows <dir>');
      const data = ReadOnlyFile.open(project.dataDir, codecOf(project));
      const port = data?.triggers.setting('webhook.port');
      const host = (project.engine.webhook as { host?: string } | undefined)?.host ?? '127.0.0.1';
      const schedules = data?.triggers.listSchedules() ?? [];
      // Workflow files are described by a Deno child with no permission (cached per version
      // in the data dir's snapshots), never imported here.
      const files = await describeFiles(project);
      const pauses = data ? await pausedWorkflows(project) : [];
      const pausedOf = (name: string) => {
        const p = pauses.find((x) => x.workflow === name);
        return p && { by: p.by, at: p.at };
      };
      const list = [...project.workflows, ...files].map((w) => ({
        name: w.name,
        paused: pausedOf(w.name),
        triggers: w.triggers.map((t) => {
          switch (t.type) {
            case 'manual': return { type: 'manual' };
            case 'event': return { type: 'event', name: t.name };
            case 'schedule': {
              const s = schedules.find((x) => x.workflow === w.name && x.cron === t.cron && x.timezone === (t.timezone ?? 'UTC'));
              return { type: 'schedule', cron: t.cron, timezone: t.timezone ?? 'UTC', catchUp: t.catchUp, nextAt: s?.nextAt };
            }
            case 'webhook': {
              const secret = data?.triggers.webhookSecret(w.name);
              return { type: 'webhook', path: t.path, url: secret && port ? `http://${host}:${port}/hooks/${w.name}/${secret}` : undefined };
            }
          }
        }),
      }));
      data?.close();
      print(o, list, () =>
        list
          .map((w) => `${w.name}${w.paused ? `  (paused by ${w.paused.by} at ${w.paused.at})` : ''}\n${w.triggers.map((t) => `  ${Object.entries(t).filter(([, v]) => v !== undefined).map(([k, v]) => (k === 'type' ? v : `${k}=${v}`)).join(' ')}`).join('\n')}`)
          .join('\n'),
      );
    });

  workflowPauseCommands(workflows);

  common(workflows.command('approve <workflow>').description("approve a workflow file's permission declaration as it is on disk (by name or file path); releases its blocked runs"))
    .option('--hash <hash>', 'approve only if the declaration on disk still has this hash (as shown by `why`)')
    .action(async (workflow: string, o: Common & { hash?: string }) => {
      // A path names the file: the engine maps it to the workflow it declares.
      const target = /[\/\\]|\.(ts|mts|js|mjs)$/.test(workflow) && existsSync(workflow) ? resolve(workflow) : workflow;
      const r = (await mutate(o, { op: 'approve', workflow: target, hash: o.hash })) as Parameters<typeof describeApproval>[0];
      print(o, r, () => describeApproval(r));
    });

  plainCommands(workflows, {
    common, print, withRuns,
    // Not a .yaml file: a workflow file, described by a Deno child with no permission.
    validateFile: async (file: string, o: Common) => {
      const project = await loadProject({ config: o.config, dataDir: o.dataDir }); // only for deno.binary
      const deno = (project.engine.deno as { binary?: string } | undefined)?.binary;
      const v = await validateFile(file, deno);
      print(o, v, () => describeValidated(v));
    },
    // No stored plain-data versions: a workflow file's snapshots.
    fileVersions: async (name: string, o: Common) => {
      const project = await loadProject(o);
      const list = listVersions(project.dataDir, name);
      print(o, list, () => describeVersions(name, list));
    },
  });

  const events = program.command('events').description('the event inbox');
  common(events.command('list').description('events, newest first'))
    .option('--unmatched', 'only events that no workflow subscribed to')
    .option('--name <event>', 'only this event name')
    .addOption(new Option('--limit <n>', 'at most n events').default(100).argParser(parseIntArg('--limit')))
    .action(async (o: Common & { unmatched?: boolean; name?: string; limit: number }) => {
      const data = await triggerReader(await loadProject(o));
      const list = await data.listEvents({ unmatched: !!o.unmatched, name: o.name, limit: Math.max(1, o.limit) }).finally(() => data.close());
      print(o, list, () => (list.length ? list.map((e) => `${e.id}  ${e.name}  ${e.createdAt}  ${e.runIds.length ? e.runIds.join(',') : '(no subscriber)'}`).join('\n') : 'no events'));
    });

  // Flow control (docs/flow-control.md): what each queue runs and holds in line, from the file.
  const queues = program.command('queues').description('flow-control queues: limits, running and waiting');
  const queueRows = async (o: Common, name?: string) => {
    const project = await loadProject(o);
    const rows = await readQueueRows(resolveConfig({ ...project.engine, dataDir: project.dataDir }), name);
    if (!rows) throw noData(project);
    return rows;
  };
  common(queues.command('list').description('every queue with its limits, bodies running and waiting'))
    .option('--all', "also the internal queues of runs.singleton and runs.rateLimit (~singleton.<workflow>, ~rate.<workflow>), labelled")
    .action(async (o: Common & { all?: boolean }) => {
      const list = listedQueues(await queueRows(o), o.all === true);
      print(o, list, () => (list.length ? list.map(queueLine).join('\n') : 'no queues'));
    });
  common(queues.command('describe <name>').description('one queue: its limits, and running and waiting per key (busiest first)'))
    .action(async (name: string, o: Common) => {
      const [q] = await queueRows(o, name);
      if (!q) throw new ValidationError(`queues describe: no queue '${name}' in this data dir (an engine records its queues when it starts; on Restate a queue shows while anything is held or waiting in it)`);
      print(o, q, () => [queueLine(q), ...(q.keys ?? []).map((k) => `  key '${k.key}'  running ${k.running}  waiting ${k.waiting}`)].join('\n'));
    });

  // Headless under the OS supervisor (docs/host.md).
  const service = program.command('service').description("run 'tranquil serve' on a data dir under the OS supervisor (systemd user unit)");
  const report = (o: Common, r: ServiceReport) => {
    const { lines, ...data } = r;
    print(o, data, () => lines.join('\n'));
  };
  common(service.command('install').description('write and load a systemd user unit running serve on the data dir (--print: only print it)'))
    .option('--print', 'print the definition instead of installing it')
    .option('--platform <os>', 'with --print: linux (systemd), darwin (LaunchAgent) or win32 (Task Scheduler)')
    .action(async (o: Common & { print?: boolean; platform?: string }) => report(o, o.print ? printService(o) : installService(o)));
  common(service.command('uninstall').description('stop, disable and remove the unit of the data dir'))
    .action(async (o: Common) => report(o, uninstallService(o)));
  common(service.command('status').description("the data dir's unit: installed, active, who serves the data dir, where it logs"))
    .action(async (o: Common) => report(o, serviceStatus(o)));

  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // One line, naming what was wrong; the exit code says it failed.
    const e = err as Error;
    console.error(`tranquil: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${(e.message ?? String(err)).split('\n')[0]}`);
    process.exitCode = 1;
  }
}
