// A plain workflow as a workflow definition the engine registers like any other: its
// triggers, a run function compiled from the data, and its pinned versions. The run's
// recorded version (`v<version>-<hash>`) picks the definition a run executes: a run started
// on v3 keeps running v3 when v4 is registered (forVersion), on both backends.
import { TerminalError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import { WORKFLOW_BRAND, type WorkflowDefinition } from '../../../sdk/workflow.ts';
import type { WorkflowFn } from '../../../sdk/types.ts';
import { compilePlain, keyTemplate, template, type Actions } from './compile.ts';
import { loadPlainWorkflow, type PlainDefinition, type PlainRuns } from './load.ts';
import type { DebounceSpec } from '../../../sdk/debounce.ts';
import type { RunOptions } from '../../../sdk/run-flow.ts';
import { PlainWorkflowError } from './plain-error.ts';

/** plainWorkflow's options. */
export interface PlainWorkflowOptions {
  /** Actions of this workflow (merged over the engine config's `actions`). */
  actions?: Actions;
  /** The file name errors are reported against. */
  source?: string;
}

/** What `plainWorkflow()` returns: a definition to put in the engine config's `workflows`.
 *  The engine (compose/plain.ts) stores its version and adds the earlier stored versions. */
export interface PlainWorkflowDefinition extends WorkflowDefinition<Json, Json> {
  readonly plain: { readonly current: PlainDefinition; readonly actions: Actions };
}

export function isPlainWorkflow(v: unknown): v is PlainWorkflowDefinition {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === WORKFLOW_BRAND && typeof (v as { plain?: unknown }).plain === 'object';
}

/** Loads YAML text (or an already loaded definition) as a workflow definition. */
export function plainWorkflow(text: string | PlainDefinition, options: PlainWorkflowOptions = {}): PlainWorkflowDefinition {
  const current = typeof text === 'string' ? loadPlainWorkflow(text, options.source) : text;
  return pinnedWorkflow(current, [], options.actions ?? {});
}

/** Every action the definition names is registered, or an error at the first that is not. */
export function checkActions(def: PlainDefinition, actions: Actions): void {
  for (const s of def.steps) {
    if (s.kind === 'action' && !Object.hasOwn(actions, s.action)) {
      const known = Object.keys(actions);
      throw new PlainWorkflowError(def.source, s.at.line, s.at.column, s.at.path,
        `action '${s.action}' is not registered (engine config actions: ${known.length ? known.map((k) => `'${k}'`).join(', ') : 'none'})`);
    }
  }
}

/** Every workflow an `invoke:` or `start:` step names is registered with the engine, or an error at the
 *  first that is not (a run would otherwise fail at that step, maybe days in). */
export function checkInvokes(def: PlainDefinition, workflows: ReadonlySet<string>): void {
  for (const s of def.steps) {
    if ((s.kind === 'invoke' || s.kind === 'start') && !workflows.has(s.workflow)) {
      throw new PlainWorkflowError(def.source, s.at.line, s.at.column, s.at.path,
        `workflow '${s.workflow}' is not registered with this engine (registered: ${[...workflows].sort().map((w) => `'${w}'`).join(', ')})`);
    }
  }
}

/** The definition that runs `current` for new runs and each of `earlier` for the runs
 *  pinned to it. A run whose version is none of them fails with an error naming it. */
export function pinnedWorkflow(current: PlainDefinition, earlier: readonly PlainDefinition[], actions: Actions): PlainWorkflowDefinition {
  const fns = new Map<string, WorkflowFn<Json, Json>>();
  for (const d of earlier) fns.set(d.versionId, compilePlain(d, actions));
  const fn = compilePlain(current, actions);
  fns.set(current.versionId, fn);
  const forVersion = (version: string): WorkflowFn<Json, Json> =>
    fns.get(version) ??
    (() => {
      throw new TerminalError(`workflow '${current.workflow}': version ${version} of this run is not stored in this engine's data dir (stored: ${[...fns.keys()].join(', ')})`);
    });
  return Object.freeze({
    kind: WORKFLOW_BRAND, name: current.workflow, triggers: Object.freeze([...current.triggers]), fn, stepDefaults: Object.freeze({}),
    version: current.versionId, forVersion, plain: Object.freeze({ current, actions }),
    ...(current.queues ? { queues: Object.freeze([...current.queues]) } : {}),
    ...(current.runs ? { runs: runOptions(current.runs) } : {}),
    ...(current.debounce ? { debounce: debounceOptions(current.debounce) } : {}),
  });
}

/** `debounce:` as the sdk's DebounceSpec, its key template a function of the input. */
function debounceOptions(b: NonNullable<PlainDefinition['debounce']>): DebounceSpec {
  const key = b.key === undefined ? undefined : keyTemplate(b.key, ['trigger']);
  return Object.freeze({
    periodMs: b.period, ...(b.maxWait !== undefined ? { maxWaitMs: b.maxWait } : {}),
    ...(key ? { key: (input: unknown) => key({ trigger: (input ?? null) as Json }) } : {}),
  });
}

/** `runs:` as the sdk's RunOptions: each key or priority template a function of the input
 *  (`trigger`), so the engine decides and refuses exactly as for a code workflow's. */
function runOptions(r: PlainRuns): RunOptions {
  const names = ['trigger'];
  const fn = (t: string | undefined) => {
    if (t === undefined) return undefined;
    const key = keyTemplate(t, names);
    return (input: unknown) => key({ trigger: (input ?? null) as Json });
  };
  const priority = r.priority === undefined ? undefined : template(r.priority, names);
  const opts: RunOptions = {
    ...(r.queue ? { queue: r.queue } : {}),
    ...(r.key !== undefined ? { key: fn(r.key)! } : {}),
    ...(priority ? { priority: (input: unknown) => priority({ trigger: (input ?? null) as Json }) as number } : {}),
    ...(r.singleton ? { singleton: { mode: r.singleton.mode, ...(r.singleton.key !== undefined ? { key: fn(r.singleton.key)! } : {}) } } : {}),
    ...(r.rateLimit ? { rateLimit: { limit: r.rateLimit.limit, period: r.rateLimit.period, ...(r.rateLimit.key !== undefined ? { key: fn(r.rateLimit.key)! } : {}) } } : {}),
  };
  return Object.freeze(opts);
}
