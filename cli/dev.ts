// `tranquil dev`: the engine with the Runs panel, reloaded when the project's files change.
// On a save it imports the config and the project files it reaches afresh (a new module
// generation, bin/project-esm.mjs), stops the engine (in-flight runs are durable: nothing is
// lost, a body cut off runs again with the same idempotency key), and replays every in-flight
// run against the new code without running a step (src/runtime/replay-check.ts) BEFORE any of
// them resumes. Then the engine starts again on the new code. When some runs would diverge,
// it names each run and the step where it diverges and holds THOSE runs (every other run,
// new runs included, goes on) until the user decides: `k` keeps the old code for them (new
// runs get the new code), `f` lets them replay the new code (they fail with
// NonDeterminismError), or undoing the edit reloads and resumes them. A held run is held at
// its run function: when the engine executes it (at once, or when its sleep or wait ends) the
// function awaits the decision before any of its code runs, so its journal is untouched. A
// config that fails to load keeps the running code.
import type { Command } from 'commander';
import { dirname, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { Option } from 'commander';
import { createEngine } from '../compose/index.ts';
import { resolveConfig } from '../compose/config.ts';
import { openRunReader } from '../compose/run-reader.ts';
import { servePanel, type HeldRun, type PanelHolds } from '../src/adapters/http/panel.ts';
import { ValidationError } from '../src/domain/errors.ts';
import { checkInFlight, type CheckVerdict } from '../src/runtime/replay-check.ts';
import { LIFECYCLE_EVENTS } from '../src/runtime/notifier.ts';
import type { Engine } from '../src/runtime/engine.ts';
import type { WorkflowDefinition } from '../sdk/workflow.ts';
import type { WorkflowFn } from '../sdk/types.ts';
import { loadProject, type Project } from './project.ts';
import { common, type Common } from './program.ts';

type Diverging = Extract<CheckVerdict, { ok: false }> & { version: string };
/** A held run's pending decision: resolves with the code it runs (the old code), or
 *  undefined for the code it was registered with (the new). */
interface Gate { decided: Promise<WorkflowFn | undefined>; decide(fn: WorkflowFn | undefined): void }
interface Running { engine: Engine; panel?: { url: string; close(): Promise<void> } }
interface DevOptions extends Common { panel: boolean; panelPort: number }

const WATCHED = /\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs|json|ya?ml)$/;

export function describeDivergence(d: Diverging): string {
  return d.position !== undefined
    ? `run ${d.runId} (${d.workflow}) at step ${d.position}: the code now calls ${d.expected}, the run recorded ${d.recorded}`
    : `run ${d.runId} (${d.workflow}): ${d.message}`;
}

export async function dev(o: DevOptions): Promise<number> {
  const out = (human: string, data: Record<string, unknown>) => console.log(o.json ? JSON.stringify(data) : `tranquil dev: ${human}`);
  let generation = 0;
  let project = await loadProject(o, undefined, generation);
  if (!project.source) throw new ValidationError('dev: no workflows: add tranquil.config.ts (npx tranquil init) or pass --config <file> or --workflows <dir>');
  // Old code kept for runs the user chose to keep on it: workflow -> recorded version -> fn.
  const kept = new Map<string, Map<string, WorkflowFn>>();
  let panelPort = o.panelPort;
  let running: Running | undefined;
  let held: { project: Project; previous: Project; diverging: Diverging[] } | undefined;

  // The held runs, by run id. Replaced (not settled) on every stop: the sessions a stopped
  // engine abandoned while they awaited a gate are then unreachable and never run on.
  let gates = new Map<string, Gate>();
  const gate = (): Gate => {
    let decide!: Gate['decide'];
    const decided = new Promise<WorkflowFn | undefined>((resolve) => (decide = resolve));
    return { decided, decide };
  };

  // Through forVersion only: `fn` (whose source is the version digest new runs record) stays
  // the definition's own.
  const withKept = (defs: WorkflowDefinition[]) => defs.map((d) => {
    const holds = held?.diverging.some((h) => h.workflow === d.name) ?? false;
    if (!kept.get(d.name)?.size && !holds) return d;
    // Read when a run executes: a `k` answered while this engine runs counts from then on.
    const code = (v: string): WorkflowFn => kept.get(d.name)?.get(v) ?? d.forVersion?.(v) ?? d.fn;
    const gated = (inner: WorkflowFn): WorkflowFn => (args) => {
      const g = gates.get(args.ctx.runId);
      return g ? g.decided.then((fn) => (fn ?? inner)(args)) : inner(args);
    };
    return Object.freeze({ ...d, forVersion: (v: string) => (holds ? gated(code(v)) : code(v)) });
  });

  const start = async (p: Project) => {
    const engine = await createEngine({ ...p.engine, dataDir: p.dataDir, workflows: withKept(p.workflows), control: true });
    await engine.start();
    for (const type of LIFECYCLE_EVENTS) engine.on(type, (e) => out(`${e.type} ${e.runId} (${e.workflow})${e.error ? `: ${e.error.name}: ${e.error.message}` : ''}`, { event: e.type, runId: e.runId, workflow: e.workflow, status: e.status, ...(e.error ? { error: e.error } : {}) }));
    const panel = o.panel ? await servePanel(engine, { port: panelPort, holds: panelHolds }) : undefined;
    if (panel) panelPort = Number(new URL(panel.url).port);
    running = { engine, panel };
    return running;
  };
  const stop = async () => {
    const r = running;
    running = undefined;
    gates = new Map();
    await r?.panel?.close();
    await r?.engine.stop();
  };

  /** In-flight runs the new code would diverge from, minus those kept on their old code. */
  const check = async (p: Project): Promise<{ checked: number; diverging: Diverging[] }> => {
    const reader = await openRunReader(resolveConfig({ ...p.engine, dataDir: p.dataDir }), { workflows: p.workflows.map((w) => w.name) });
    if (!reader) return { checked: 0, diverging: [] };
    try {
      const verdicts = await checkInFlight(reader, p.workflows);
      const diverging: Diverging[] = [];
      for (const v of verdicts) {
        if (v.ok) continue;
        const version = (await reader.getRun(v.runId))?.version ?? '';
        if (!kept.get(v.workflow)?.has(version)) diverging.push({ ...v, version });
      }
      return { checked: verdicts.length, diverging };
    } finally {
      await reader.close();
    }
  };

  const resume = async (p: Project, why: string) => {
    held = undefined;
    project = p;
    await start(p);
    out(why, { event: 'reloaded', generation, workflows: p.workflows.map((w) => w.name), panel: running?.panel?.url ?? null });
  };

  const reload = async (changed: string) => {
    generation += 1;
    let next: Project;
    try {
      next = await loadProject(o, undefined, generation);
    } catch (err) {
      out(`${changed} changed; not reloaded: ${(err as Error).message.split('\n')[0]} (still running the previous code)`, { event: 'reload-failed', file: changed, error: (err as Error).message.split('\n')[0] });
      return;
    }
    const previous = held?.previous ?? project;
    await stop(); // nothing resumes before the check
    const { checked, diverging } = await check(next);
    if (diverging.length === 0) return resume(next, `${changed} changed; reloaded, ${checked} in-flight run(s) replay the new code cleanly`);
    // The diverging runs wait at their gates; the engine starts on the new code for the rest.
    held = { project: next, previous, diverging };
    gates = new Map(diverging.map((d) => [d.runId, gate()])); // before start: a due run executes at once
    await start(next);
    out(`${changed} changed; the new code would diverge from ${diverging.length} in-flight run(s), held until you decide (the other runs go on):\n${diverging.map((d) => `  ${describeDivergence(d)}`).join('\n')}\n  type k + Enter to keep the old code for them, f + Enter to let them fail, or undo the edit`, {
      event: 'diverging', generation, runs: diverging.map(({ runId, workflow, position, expected, recorded, message }) => ({ runId, workflow, position, expected, recorded, message })),
      panel: running?.panel?.url ?? null,
    });
  };

  // The engine already runs the new code: a decision opens the held runs' gates, no restart.
  const decide = async (answer: string): Promise<string | undefined> => {
    if (!held || (answer !== 'k' && answer !== 'f')) return undefined;
    const h = held;
    held = undefined;
    project = h.project;
    for (const d of h.diverging) {
      const old = answer === 'k' ? h.previous.workflows.find((w) => w.name === d.workflow) : undefined;
      const fn = old && (old.forVersion?.(d.version) ?? old.fn);
      if (fn) {
        // Kept across later reloads too (withKept, and check() no longer reports the run).
        if (!kept.has(d.workflow)) kept.set(d.workflow, new Map());
        kept.get(d.workflow)!.set(d.version, fn);
      }
      gates.get(d.runId)?.decide(fn);
    }
    gates = new Map();
    const why = answer === 'k' ? `kept the old code for ${h.diverging.length} run(s); new runs get the new code` : `${h.diverging.length} run(s) replay the new code and fail`;
    out(why, { event: 'reloaded', generation, workflows: h.project.workflows.map((w) => w.name), panel: running?.panel?.url ?? null });
    return why;
  };

  // One change at a time, in order; a burst of saves is one reload.
  let queue = Promise.resolve();
  const enqueue = (task: () => Promise<unknown>) => (queue = queue.then(task).then(() => {}, (err) => out(`error: ${(err as Error).message}`, { event: 'error', error: (err as Error).message })));

  // What the panel shows and how it answers: the same held runs and decision as the terminal.
  const panelHolds: PanelHolds = {
    list: (): HeldRun[] => (held?.diverging ?? []).map((d) => ({
      runId: d.runId, workflow: d.workflow, position: d.position, expected: d.expected, recorded: d.recorded, detail: describeDivergence(d),
    })),
    decide: async (answer) => {
      let note = 'nothing is held now';
      await enqueue(async () => void (note = (await decide(answer === 'keep' ? 'k' : 'f')) ?? note));
      return note;
    },
  };

  await start(project);
  const root = o.workflows ? project.source! : dirname(project.source!);
  const data = relative(root, project.dataDir);
  let timer: NodeJS.Timeout | undefined;
  const changed = new Set<string>();
  const ignored = (path: string) => {
    const rel = relative(root, path);
    const parts = rel.split(sep);
    return parts.includes('node_modules') || parts.includes('.git') || (!!data && !data.startsWith('..') && (rel === data || rel.startsWith(data + sep)));
  };
  // chokidar (loaded only here): editors save by rename, which node's recursive fs.watch
  // loses track of on Linux.
  const { watch } = await import('chokidar');
  const watcher = watch(root, { ignored, ignoreInitial: true });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  watcher.on('all', (_event, path) => {
    if (!WATCHED.test(path)) return;
    changed.add(relative(root, path));
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed].join(', ');
      changed.clear();
      enqueue(() => reload(files));
    }, 150);
  });
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => enqueue(() => decide(line.trim().toLowerCase())));

  out(`watching ${root}; data dir ${project.dataDir}${running?.panel ? `; Runs panel on ${running.panel.url}` : ''} (Ctrl-C to stop)`, {
    event: 'ready', pid: process.pid, dataDir: project.dataDir, watching: root, workflows: project.workflows.map((w) => w.name), panel: running?.panel?.url ?? null,
  });
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  await watcher.close();
  clearTimeout(timer);
  input.close();
  await queue;
  await stop();
  out(`${signal}, stopped`, { event: 'stopped', signal });
  return 0;
}

export function devCommand(program: Command): void {
  common(program.command('dev').description('run the engine with the Runs panel, reload on save, and say which in-flight runs an edit would diverge from before they resume'))
    .option('--no-panel', 'do not serve the Runs panel')
    .addOption(new Option('--panel-port <port>', "the Runs panel's port on 127.0.0.1 (default: any free port, kept across reloads)").default(0).argParser((v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ValidationError(`--panel-port: expected a port number, got '${v}'`);
      return n;
    }))
    .action(async (o: DevOptions) => {
      process.exitCode = await dev(o);
    });
}
