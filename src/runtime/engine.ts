// The Engine: the public embedding API (CONTRACT.md), backend-neutral. It validates every
// argument at the boundary, then delegates to the DurableExecutor chosen in compose/.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseDuration, type Duration } from '../domain/duration.ts';
import { UnknownRunError, ValidationError } from '../domain/errors.ts';
import { explain, type Explanation } from '../domain/explain.ts';
import { roundTrip, type Json } from '../domain/json.ts';
import { RUN_STATUSES } from '../domain/run-status.ts';
import type { RunFilter, RunView } from '../domain/run-view.ts';
import type { Clock } from '../ports/clock.ts';
import type { DurableExecutor, EmitResult } from '../ports/executor.ts';
import type { WorkflowRegistry } from './registry.ts';

const idSchema = z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').regex(/^[A-Za-z0-9_.:\-]+$/, 'letters, digits and _ . : - only');
const nameSchema = z.string().min(1, 'must not be empty').max(200, 'at most 200 characters');
const filterSchema = z
  .object({
    status: z.enum(RUN_STATUSES).optional(),
    workflow: z.string().min(1).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue?.path.length ? `.${issue.path.join('.')}` : '';
    throw new ValidationError(`${what}${path}: ${issue?.message ?? 'invalid'}`);
  }
  return r.data;
}

function jsonArg(value: unknown, what: string): Json {
  try {
    return roundTrip(value, what) as Json;
  } catch (err) {
    throw new ValidationError((err as Error).message);
  }
}

const MAX_WAIT_MS = 2 ** 31 - 1;

export interface RunsApi {
  get(runId: string): Promise<RunView>;
  list(filter?: RunFilter): Promise<RunView[]>;
  cancel(runId: string): Promise<void>;
  retry(runId: string): Promise<void>;
  explain(runId: string): Promise<Explanation>;
}

export class Engine {
  readonly runs: RunsApi;

  constructor(
    readonly executor: DurableExecutor,
    readonly registry: WorkflowRegistry,
    private readonly clock: Clock,
  ) {
    this.runs = {
      get: async (runId) => this.view(runId),
      list: async (filter = {}) => this.executor.listRuns(check(filterSchema, filter, 'runs.list filter')),
      cancel: async (runId) => this.executor.cancel(check(idSchema, runId, 'runId')),
      retry: async (runId) => this.executor.retry(check(idSchema, runId, 'runId')),
      explain: async (runId) => explain(await this.view(runId), this.clock.now()),
    };
  }

  get backend(): string {
    return this.executor.backend;
  }

  start(): Promise<void> {
    return this.executor.start();
  }

  stop(): Promise<void> {
    return this.executor.stop();
  }

  async trigger(workflow: string, input: unknown = null, options: { runId?: string } = {}): Promise<{ runId: string; created: boolean }> {
    const name = check(nameSchema, workflow, 'workflow');
    this.registry.get(name);
    const opts = check(z.object({ runId: idSchema.optional() }).strict(), options, 'trigger options');
    const data = jsonArg(input, `input of trigger('${name}')`);
    return this.executor.startRun({ workflow: name, input: data, runId: opts.runId ?? randomUUID() });
  }

  async emit(name: string, payload: unknown = null, options: { id?: string } = {}): Promise<EmitResult> {
    const event = check(nameSchema, name, 'event name');
    const opts = check(z.object({ id: idSchema.optional() }).strict(), options, 'emit options');
    const data = jsonArg(payload, `payload of emit('${event}')`);
    return this.executor.emit({ name: event, payload: data, id: opts.id ?? randomUUID() });
  }

  async signal(runId: string, name: string, payload: unknown = null): Promise<void> {
    const id = check(idSchema, runId, 'runId');
    const signal = check(nameSchema, name, 'signal name');
    return this.executor.signal(id, signal, jsonArg(payload, `payload of signal('${signal}')`));
  }

  async result(runId: string, options: { timeout?: Duration } = {}): Promise<RunView> {
    const id = check(idSchema, runId, 'runId');
    let timeoutMs = MAX_WAIT_MS;
    if (options.timeout !== undefined) {
      try {
        timeoutMs = Math.min(MAX_WAIT_MS, Math.max(0, parseDuration(options.timeout, 'result timeout')));
      } catch (err) {
        throw new ValidationError((err as Error).message);
      }
    }
    return this.executor.waitForTerminal(id, timeoutMs);
  }

  private async view(runId: string): Promise<RunView> {
    const id = check(idSchema, runId, 'runId');
    const v = await this.executor.getRun(id);
    if (!v) throw new UnknownRunError(id);
    return v;
  }
}
