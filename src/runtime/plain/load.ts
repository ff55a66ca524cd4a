// The plain-workflow loader: YAML text -> a checked PlainDefinition, or one PlainWorkflowError
// naming line, column and field path. Everything that can be known from the file alone is
// checked here, before any run exists: unknown keys, bad durations, duplicate step ids, a
// condition or template naming a step that has not run yet or a name that does not exist,
// a cron expression that does not parse. Whether each action is registered is checked when
// an engine is built (the file alone cannot know), see plain-workflow.ts.
import { sha256Hex } from '../../domain/sha256.ts';
import type { LineCounter, Node } from 'yaml';
import type { Json } from '../../domain/json.ts';
import { normalizeStepOptions } from '../../../sdk/step-options.ts';
import { event, manual, schedule, triggerKey, webhook, type Trigger } from '../../../sdk/triggers.ts';
import type { StepOptions } from '../../../sdk/types.ts';
import { BUILTIN_NAMES, checkExpression, splitTemplate } from './expressions.ts';
import { queue, type QueueDefinition } from '../../../sdk/queue.ts';
import { yamlModule } from './lazy-deps.ts';
import { PlainWorkflowError } from './plain-error.ts';
import { definitionSchema, type DefinitionData, type PlainTriggerData, type StepData } from './schema.ts';

export type Path = readonly (string | number)[];

/** Where a step's fields are in the file (for errors found after loading, e.g. an action no
 *  app registered). */
export interface Place {
  line: number;
  column: number;
  path: string;
}

/** One step of a plain workflow, as loaded: an action call, a sleep, a wait for an event, or
 *  a condition that ends the run (as skipped) when false. */
export type PlainStep =
  | { kind: 'action'; id: string; action: string; input?: Json; key?: string; queue?: { name: string; key?: string }; options: StepOptions; nonRetryable: string[]; at: Place }
  | { kind: 'sleep'; id: string; ms: number }
  | { kind: 'wait'; id: string; event: string; timeoutMs?: number }
  | { kind: 'condition'; id: string; condition: string }
  | { kind: 'invoke'; id: string; workflow: string; input?: Json; timeoutMs?: number; onParentCancel?: 'cancel' | 'abandon'; at: Place }
  | { kind: 'start'; id: string; workflow: string; input?: Json; onParentCancel?: 'cancel' | 'abandon'; at: Place }
  | { kind: 'result'; id: string; of: string; timeoutMs?: number };

/** A plain (YAML) workflow parsed and checked by loadPlainWorkflow (docs/plain-workflows.md). */
export interface PlainDefinition {
  workflow: string;
  version: number;
  description?: string;
  triggers: Trigger[];
  steps: PlainStep[];
  /** Digest of the definition's content (its data, not its comments or layout). */
  hash: string;
  /** `v<version>-<hash>`: what the engine records as each run's version. */
  versionId: string;
  /** The file name (or label) errors are reported against. */
  source: string;
  /** The YAML text as given (stored with the version). */
  text: string;
  /** `queues:`, each made by queue() (docs/flow-control.md). */
  queues?: QueueDefinition[];
  /** `runs:` (run-level flow control), its keys and priority as templates of `trigger`. */
  runs?: PlainRuns;
  /** `debounce:` in ms, its key a template of `trigger`. */
  debounce?: { period: number; maxWait?: number; key?: string };
}

/** A plain workflow's `runs:` as loaded: names and templates (compiled by plain-workflow.ts). */
export interface PlainRuns {
  queue?: QueueDefinition;
  key?: string;
  priority?: string;
  singleton?: { mode: 'skip' | 'cancel'; key?: string };
  rateLimit?: { limit: number; period: number; key?: string };
}

/** `steps[2].retry.base` */
export function formatPath(path: Path): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out;
}

/** Largest definition accepted: a workflow definition is small; this bounds parse time. */
const MAX_TEXT = 1024 * 1024;

class Locator {
  constructor(
    private readonly contents: unknown,
    private readonly lines: LineCounter,
    private readonly source: string,
  ) {}

  /** The deepest node along `path` (the key's node when `onKey`, for an unknown key). */
  place(path: Path, onKey = false): Place {
    const { isMap, isPair, isScalar, isSeq } = yamlModule();
    let node: unknown = this.contents;
    let offset = rangeStart(node) ?? 0;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        const last = i === path.length - 1;
        if (last && onKey) {
          offset = rangeStart(pair.key) ?? offset;
          break;
        }
        node = pair.value;
        offset = rangeStart(pair.value) ?? rangeStart(pair.key) ?? offset;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
        if (node === undefined) break;
        offset = rangeStart(node) ?? offset;
      } else break;
    }
    const pos = this.lines.linePos(offset);
    return { line: pos.line, column: pos.col, path: formatPath(path) };
  }

  error(path: Path, reason: string, onKey = false): PlainWorkflowError {
    const at = this.place(path, onKey);
    return new PlainWorkflowError(this.source, at.line, at.column, at.path, reason);
  }
}

function rangeStart(n: unknown): number | undefined {
  const r = (n as Node | undefined)?.range;
  return Array.isArray(r) ? r[0] : undefined;
}

/** Parses and checks a plain workflow; throws PlainWorkflowError and nothing else. */
export function loadPlainWorkflow(text: string, source = '<yaml>'): PlainDefinition {
  if (typeof text !== 'string') throw new PlainWorkflowError(source, 1, 1, '', 'expected the YAML text of a workflow (a string)');
  if (text.length > MAX_TEXT) throw new PlainWorkflowError(source, 1, 1, '', `the definition is ${text.length} characters; at most ${MAX_TEXT}`);
  const { LineCounter, parseDocument } = yamlModule();
  const lines = new LineCounter();
  // uniqueKeys: a key given twice is an error, not a silent overwrite.
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true, version: '1.2', schema: 'core' });
  const first = doc.errors[0];
  if (first) {
    const pos = lines.linePos(first.pos[0]);
    throw new PlainWorkflowError(source, pos.line, pos.col, '', `not valid YAML: ${first.message.split('\n')[0]}`);
  }
  const at = new Locator(doc.contents, lines, source);
  let data: unknown;
  try {
    // Aliases are plain data here; a bound on their expansion keeps a small file small.
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw at.error([], `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw at.error([], 'expected a mapping with workflow, version, trigger and steps');
  }
  const r = definitionSchema().safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') throw at.error([...path, String(issue.keys[0])], issue.message, true);
    if (issue.code === 'custom' && (issue.params as { onKey?: boolean } | undefined)?.onKey) throw at.error(path, issue.message, true);
    // A missing field is reported at its mapping, named in the path.
    throw at.error(path, issue.message);
  }
  return check(r.data, at, text, source);
}

function check(d: DefinitionData, at: Locator, text: string, source: string): PlainDefinition {
  const triggers = d.trigger.map((t, i) => toTrigger(t, i, at, d));
  const keys = triggers.map(triggerKey);
  keys.forEach((k, i) => {
    if (keys.indexOf(k) !== i) throw at.error(['trigger', i], `duplicate trigger ${k} (also trigger[${keys.indexOf(k)}])`);
  });
  const queues = toQueues(d, at);
  const seen = new Map<string, number>();
  const steps: PlainStep[] = [];
  const ids = d.steps.map((s) => s.id);
  d.steps.forEach((s, i) => {
    const before = seen.get(s.id);
    if (before !== undefined) throw at.error(['steps', i, 'id'], `duplicate step id '${s.id}' (also steps[${before}])`);
    seen.set(s.id, i);
    const known = [...BUILTIN_NAMES, ...ids.slice(0, i)];
    const later = ids.slice(i);
    steps.push(toStep(s, i, known, later, at, steps, queues));
  });
  const canonical = JSON.stringify(sortKeys(d as unknown as Json));
  const hash = sha256Hex(canonical).slice(0, 12);
  const def: PlainDefinition = { workflow: d.workflow, version: d.version, triggers, steps, hash, versionId: `v${d.version}-${hash}`, source, text };
  if (d.description !== undefined) def.description = d.description;
  if (queues.size > 0) def.queues = [...queues.values()];
  if (d.runs) def.runs = toRuns(d.runs, queues, at, ids);
  if (d.debounce) def.debounce = toDebounce(d.debounce, at, ids);
  return def;
}

function toTrigger(t: PlainTriggerData, i: number, at: Locator, d: DefinitionData): Trigger {
  const path: Path = d.trigger.length > 1 ? ['trigger', i] : ['trigger'];
  try {
    if ('event' in t) return event(t.event);
    if ('schedule' in t) return schedule(t.schedule, { ...(t.timezone ? { timezone: t.timezone } : {}), ...(t.catch_up ? { catchUp: t.catch_up } : {}) });
    if ('webhook' in t) return webhook({ path: t.webhook });
    return manual();
  } catch (err) {
    throw at.error(path, (err as Error).message);
  }
}

/** `queues:` made by queue() (the same checks as in code: a queue with no limit at all). */
function toQueues(d: DefinitionData, at: Locator): Map<string, QueueDefinition> {
  const out = new Map<string, QueueDefinition>();
  for (const [name, q] of Object.entries(d.queues ?? {})) {
    const level = (l: { concurrency?: number; rate_limit?: { limit: number; period: number } }) => ({
      ...(l.concurrency !== undefined ? { concurrency: l.concurrency } : {}),
      ...(l.rate_limit ? { rateLimit: { limit: l.rate_limit.limit, period: l.rate_limit.period } } : {}),
    });
    try {
      out.set(name, queue(name, { ...level(q), ...(q.key ? { key: level(q.key) } : {}) }));
    } catch (err) {
      // queue()'s message names the queue: "queue 'llm' options: give concurrency, ..."
      throw at.error(['queues', name], (err as Error).message.replace(/^queue name: /, '').replace('rateLimit', 'rate_limit'));
    }
  }
  return out;
}

/** A queue named by a step or `runs.queue`: one the file declares under `queues:`. */
function declared(name: string, queues: ReadonlyMap<string, QueueDefinition>, path: Path, at: Locator): QueueDefinition {
  const q = queues.get(name);
  if (!q) throw at.error(path, `queue '${name}' is not declared (queues: ${queues.size ? [...queues.keys()].map((k) => `'${k}'`).join(', ') : 'none'})`);
  return q;
}

/** Checks a template of a run's key or priority: it sees only `trigger`. */
function triggerTemplate(at: Locator, ids: string[]) {
  return (t: string | undefined, path: Path) => {
    if (t === undefined) return;
    templates(t, path, (e, p) => {
      const bad = checkExpression(e, ['trigger'], ids);
      if (bad) throw at.error(p, `${bad} (a run's key or priority sees only trigger: it is decided before the run starts)`);
    }, at);
  };
}

/** `debounce:`: the key a template of `trigger`; max_wait at least the period (as in code). */
function toDebounce(b: NonNullable<DefinitionData['debounce']>, at: Locator, ids: string[]): NonNullable<PlainDefinition['debounce']> {
  triggerTemplate(at, ids)(b.key, ['debounce', 'key']);
  if (b.max_wait !== undefined && b.max_wait < b.period) throw at.error(['debounce', 'max_wait'], `must be at least the period (${b.period}ms), got ${b.max_wait}ms`);
  return { period: b.period, ...(b.max_wait !== undefined ? { maxWait: b.max_wait } : {}), ...(b.key !== undefined ? { key: b.key } : {}) };
}

/** `runs:`: keys and priority are templates of the trigger's input only (decided before the
 *  run exists); the sdk's rules for `runs` apply (key and priority need a queue). */
function toRuns(r: NonNullable<DefinitionData['runs']>, queues: ReadonlyMap<string, QueueDefinition>, at: Locator, ids: string[]): PlainRuns {
  const tpl = triggerTemplate(at, ids);
  const out: PlainRuns = {};
  if (r.queue !== undefined) out.queue = declared(r.queue, queues, ['runs', 'queue'], at);
  for (const f of ['key', 'priority'] as const) {
    if (r[f] === undefined) continue;
    if (r.queue === undefined) throw at.error(['runs', f], "needs runs.queue (the key and priority of a run's queue slot)");
    tpl(r[f], ['runs', f]);
    out[f] = r[f];
  }
  if (r.singleton) {
    tpl(r.singleton.key, ['runs', 'singleton', 'key']);
    out.singleton = { mode: r.singleton.mode, ...(r.singleton.key !== undefined ? { key: r.singleton.key } : {}) };
  }
  if (r.rate_limit) {
    tpl(r.rate_limit.key, ['runs', 'rate_limit', 'key']);
    out.rateLimit = { limit: r.rate_limit.limit, period: r.rate_limit.period, ...(r.rate_limit.key !== undefined ? { key: r.rate_limit.key } : {}) };
  }
  if (!out.queue && !out.singleton && !out.rateLimit) throw at.error(['runs'], 'give queue, singleton or rate_limit');
  return out;
}

function toStep(s: StepData, i: number, known: string[], later: string[], at: Locator, earlier: readonly PlainStep[], queues: ReadonlyMap<string, QueueDefinition>): PlainStep {
  const expr = (e: string, path: Path) => {
    const bad = checkExpression(e, known, later);
    if (bad) throw at.error(path, bad);
  };
  switch (s.kind) {
    case 'condition':
      expr(s.condition, ['steps', i, 'condition']);
      return { kind: 'condition', id: s.id, condition: s.condition };
    case 'wait':
      if ('sleepMs' in s.wait) return { kind: 'sleep', id: s.id, ms: s.wait.sleepMs ?? 0 };
      return { kind: 'wait', id: s.id, event: s.wait.event, ...(s.wait.timeoutMs !== undefined ? { timeoutMs: s.wait.timeoutMs } : {}) };
    case 'invoke': {
      const input = s.input === undefined ? undefined : jsonInput(s.input, ['steps', i, 'input'], at);
      if (input !== undefined) forEachString(input, ['steps', i, 'input'], (str, path) => templates(str, path, expr, at));
      const step: PlainStep = { kind: 'invoke', id: s.id, workflow: s.invoke, at: at.place(['steps', i, 'invoke']) };
      if (input !== undefined) step.input = input;
      if (s.timeout !== undefined) step.timeoutMs = s.timeout;
      if (s.onParentCancel !== undefined) step.onParentCancel = s.onParentCancel;
      return step;
    }
    case 'start': {
      const input = s.input === undefined ? undefined : jsonInput(s.input, ['steps', i, 'input'], at);
      if (input !== undefined) forEachString(input, ['steps', i, 'input'], (str, path) => templates(str, path, expr, at));
      const step: PlainStep = { kind: 'start', id: s.id, workflow: s.start, at: at.place(['steps', i, 'start']) };
      if (input !== undefined) step.input = input;
      if (s.onParentCancel !== undefined) step.onParentCancel = s.onParentCancel;
      return step;
    }
    case 'result': {
      // Only a child this run started can be awaited (step.result), and only after its start.
      const started = earlier.find((e) => e.id === s.result);
      if (started?.kind !== 'start') {
        const starts = earlier.filter((e) => e.kind === 'start').map((e) => `'${e.id}'`);
        throw at.error(['steps', i, 'result'], `'${s.result}' is not an earlier start step (earlier start steps: ${starts.length ? starts.join(', ') : 'none'})`);
      }
      return { kind: 'result', id: s.id, of: s.result, ...(s.timeout !== undefined ? { timeoutMs: s.timeout } : {}) };
    }
    case 'action': {
      const input = s.input === undefined ? undefined : jsonInput(s.input, ['steps', i, 'input'], at);
      if (input !== undefined) forEachString(input, ['steps', i, 'input'], (str, path) => templates(str, path, expr, at));
      if (s.key !== undefined) templates(s.key, ['steps', i, 'key'], expr, at);
      const options: StepOptions = {};
      if (s.retry) {
        const r = s.retry;
        options.retries = {
          ...(r.max !== undefined ? { limit: r.max } : {}), ...(r.backoff ? { backoff: r.backoff } : {}), ...(r.base !== undefined ? { delay: r.base } : {}),
          ...(r.max_delay !== undefined ? { maxDelay: r.max_delay } : {}), ...(r.jitter !== undefined ? { jitter: r.jitter } : {}),
        };
      }
      if (s.timeout !== undefined) options.timeout = s.timeout;
      try {
        normalizeStepOptions(s.id, options);
      } catch (err) {
        throw at.error(['steps', i, s.retry ? 'retry' : 'timeout'], (err as Error).message);
      }
      const step: PlainStep = { kind: 'action', id: s.id, action: s.action, options, nonRetryable: s.retry?.non_retryable ?? [], at: at.place(['steps', i, 'action']) };
      if (input !== undefined) step.input = input;
      if (s.key !== undefined) step.key = s.key;
      if (s.queue !== undefined) {
        const q = typeof s.queue === 'string' ? { name: s.queue } : s.queue;
        declared(q.name, queues, ['steps', i, 'queue', ...(typeof s.queue === 'string' ? [] : ['name'])], at);
        if (q.key !== undefined) templates(q.key, ['steps', i, 'queue', 'key'], expr, at);
        step.queue = q.key !== undefined ? { name: q.name, key: q.key } : { name: q.name };
      }
      return step;
    }
  }
}

function templates(str: string, path: Path, expr: (e: string, path: Path) => void, at: Locator): void {
  const parts = splitTemplate(str);
  if (parts === undefined) return;
  if (typeof parts === 'string') throw at.error(path, parts);
  for (const p of parts) if ('expr' in p) expr(p.expr, path);
}

/** The input as JSON: YAML can say things JSON cannot (binary, non-finite numbers). */
function jsonInput(v: unknown, path: Path, at: Locator): Json {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw at.error(path, `${v} is not a JSON number`);
    return v;
  }
  if (Array.isArray(v)) return v.map((x, i) => jsonInput(x, [...path, i], at));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const o: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = jsonInput(x, [...path, k], at);
    return o;
  }
  throw at.error(path, `a ${(v as object)?.constructor?.name ?? typeof v} is not JSON data`);
}

function forEachString(v: Json, path: Path, fn: (s: string, path: Path) => void): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v)) v.forEach((x, i) => forEachString(x, [...path, i], fn));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) forEachString(x, [...path, k], fn);
}

function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null) {
    const o: Record<string, Json> = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]!);
    return o;
  }
  return v;
}

