// The CLI's mutating commands as data: one zod-validated union, applied to an Engine either
// inside a running `serve` (via the control endpoint) or in-process. Same code both ways.
import { z } from 'zod';
import type { Engine } from '../src/runtime/engine.ts';
import type { RetryResult } from '../src/domain/retry-point.ts';
import type { RunView } from '../src/domain/run-view.ts';

const json = z.unknown();

export const opSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('run'), workflow: z.string().min(1), input: json, runId: z.string().min(1).optional(), waitMs: z.number().int().min(0) }).strict(),
  z.object({ op: z.literal('emit'), name: z.string().min(1), data: json, id: z.string().min(1).optional() }).strict(),
  z.object({ op: z.literal('signal'), runId: z.string().min(1), name: z.string().min(1), data: json }).strict(),
  // `by`: who asks (recorded; `why` says it): `cli (<user>@<host>)` from the CLI.
  z.object({ op: z.literal('cancel'), runId: z.string().min(1), by: z.string().min(1).max(200).optional() }).strict(),
  z.object({ op: z.literal('retry'), runId: z.string().min(1), from: z.string().min(1).optional() }).strict(),
  // A workflow file's name, or its absolute path; `hash`: approve only that declaration.
  z.object({ op: z.literal('approve'), workflow: z.string().min(1), hash: z.string().min(1).optional() }).strict(),
  z.object({ op: z.literal('gc'), dryRun: z.boolean() }).strict(),
]);

export type Op = z.infer<typeof opSchema>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the run leaves pending/running (finished, or suspended on time or a signal). */
async function settle(engine: Engine, runId: string, waitMs: number): Promise<RunView> {
  const end = Date.now() + waitMs;
  for (;;) {
    const v = await engine.runs.get(runId);
    if ((v.status !== 'pending' && v.status !== 'running') || Date.now() >= end) return v;
    await sleep(10);
  }
}

export async function applyOp(engine: Engine, op: Op): Promise<unknown> {
  switch (op.op) {
    case 'run': {
      const started = await engine.trigger(op.workflow, op.input ?? null, op.runId ? { runId: op.runId } : {});
      const view = await settle(engine, started.runId, op.waitMs);
      return { ...started, status: view.status, output: view.output, error: view.error, wakeAt: view.wakeAt };
    }
    case 'emit':
      return engine.emit(op.name, op.data ?? null, op.id ? { id: op.id } : {});
    case 'signal':
      await engine.signal(op.runId, op.name, op.data ?? null);
      return { runId: op.runId, signal: op.name, delivered: true };
    case 'cancel':
      await engine.runs.cancel(op.runId, op.by === undefined ? {} : { by: op.by });
      return { runId: op.runId, cancelled: true };
    case 'retry': {
      const r = await engine.runs.retry(op.runId, op.from === undefined ? {} : { from: op.from });
      return { runId: op.runId, ...r };
    }
    case 'gc':
      return engine.gc({ dryRun: op.dryRun });
    case 'approve': {
      const byPath = engine.registry.all().find((w) => w.file?.path === op.workflow);
      return engine.workflows.approve(byPath?.definition.name ?? op.workflow, op.hash === undefined ? {} : { hash: op.hash });
    }
  }
}

/** `tranquil workflows approve` for a person: what was approved and what it released. */
export function describeApproval(r: { workflow: string; hash: string; version: string; declaration: Record<string, string[] | undefined>; released: string[] }): string {
  const grants = Object.entries(r.declaration).flatMap(([k, v]) => (v ?? []).map((e) => `  ${k} ${e}`));
  return [
    `approved the permission declaration ${r.hash} of workflow '${r.workflow}' (file version ${r.version}):`,
    ...(grants.length ? grants : ['  (no grants: the child may only talk to the engine)']),
    r.released.length ? `released ${r.released.length} blocked run${r.released.length === 1 ? '' : 's'}: ${r.released.join(' ')}` : 'no blocked run to release',
  ].join('\n');
}

/** `tranquil runs retry` for a person: where the run resumes and every step it discarded. */
export function describeRetry(r: RetryResult & { runId: string }): string {
  if (!r.from) return `retrying ${r.runId}: it failed outside any step; its code runs again from the last recorded step, nothing discarded`;
  const n = r.discarded.length;
  return [
    `retrying ${r.runId} from step '${r.from.name}'; discarded ${n} recorded step${n === 1 ? '' : 's'}:`,
    ...r.discarded.map((d) => `  [${d.seq}] ${d.kind} '${d.name}' ${d.status}`),
  ].join('\n');
}
