// RunReader on Restate: every run Restate has accepted is read from the admin API's SQL
// introspection (the invocation row + the workflow's own state, see run-views.ts). The local
// index is asked only for what Restate cannot know: a run written to the outbox and not yet
// visible in Restate (answered as `pending`), and a divergence this engine recorded. The
// engine's RestateExecutor and the CLI use this same class.
import * as z from 'zod';
import { decodeCursor, encodeCursor } from '../../domain/run-cursor.ts';
import { DEFAULT_PAGE, type ChildOutput, type RunFilter, type RunPage, type RunView } from '../../domain/run-view.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { OutboxLookup, RunReader } from '../../ports/run-reader.ts';
import { divergenceOf, outboxView } from './outbox-view.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import type { PayloadCodec } from '../../domain/payload-codec.ts';
import { divergencesIn } from './divergence-object.ts';
import { outputOf } from './output-object.ts';
import { buildView, collectState, INVOCATION_COLUMNS, type InvocationRow } from './run-views.ts';
import { serviceName, workflowName } from './workflow-service.ts';
import { lineOf, queueSummariesAt, slotWaitOf } from './queue-views.ts';
import type { QueueSummary } from '../../domain/queue-summary.ts';
import { waitIn } from '../../domain/queue-snapshot.ts';
import type { WorkflowPause } from '../../domain/workflow-pause.ts';
import { WORKFLOW_PAUSE_OBJECT, type WorkflowPaused } from './workflow-pause-object.ts';

export interface RestateRunReaderOptions {
  admin: () => AdminApi;
  /** Workflows whose runs this reader sees; undefined = every Tranquil service on the server. */
  workflows?: readonly string[];
  /** The trigger store's run outbox (pending runs, recorded divergences); absent = none
   *  (a reader with no local file). */
  local?: OutboxLookup;
  /** Runs the cluster's shared triggers started (cluster-triggers.ts issuedRun): another
   *  replica's event or slot, accepted and not yet visible here. Asked on a miss only. */
  issued?: OutboxLookup;
  /** The payload codec the runs' state was written with (default identity). */
  codec?: PayloadCodec;
}

type StateRow = { key: string; value_utf8: string | null };

/** Where a page ended: the invocation's creation time (as the admin API prints it) and id. */
const cursorSchema = z.object({ c: z.string().regex(/^[0-9TZ:.\- +]{1,40}$/), i: z.string().regex(/^inv_[A-Za-z0-9]{1,80}$/) });

export class RestateRunReader implements RunReader {
  private readonly services: string[] | undefined;

  constructor(private readonly o: RestateRunReaderOptions) {
    this.services = o.workflows?.map(serviceName);
  }

  /** The queue objects' state (an idle queue's object keeps none: not listed). */
  async queueSummaries(now: number): Promise<QueueSummary[]> {
    return queueSummariesAt(this.o.admin(), now);
  }

  /** The paused workflows (workflow-pause-object.ts state), by name. */
  async workflowPauses(): Promise<WorkflowPause[]> {
    const rows = await this.o.admin().query<{ service_key: string; value_utf8: string | null }>(
      `SELECT service_key, value_utf8 FROM state WHERE service_name = ${sqlString(WORKFLOW_PAUSE_OBJECT)} AND key = 'paused'`,
    );
    const known = this.o.workflows && new Set(this.o.workflows);
    return rows.flatMap((r) => {
      const p = r.value_utf8 ? (JSON.parse(r.value_utf8) as Partial<WorkflowPaused>) : undefined;
      if (typeof p?.by !== 'string' || typeof p.t !== 'number' || (known && !known.has(r.service_key))) return [];
      return [{ workflow: r.service_key, by: p.by, at: new Date(p.t).toISOString() }];
    }).sort((a, b) => a.workflow.localeCompare(b.workflow));
  }

  /** `IN (...)` over the known services, or any Tranquil service (`tq_` prefix). */
  private serviceFilter(column: string, workflow?: string): string | undefined {
    if (workflow !== undefined) return `${column} = ${sqlString(serviceName(workflow))}`;
    if (!this.services) return `starts_with(${column}, 'tq_')`;
    if (this.services.length === 0) return undefined;
    return `${column} IN (${this.services.map(sqlString).join(',')})`;
  }

  /** The run's invocation row (the `run` handler keyed by run id), if Restate shows one. */
  async invocation(runId: string, workflow?: string): Promise<{ inv: InvocationRow; workflow: string } | undefined> {
    const services = this.serviceFilter('target_service_name', workflow);
    if (!services) return undefined;
    const rows = await this.o.admin().query<InvocationRow>(
      `SELECT ${INVOCATION_COLUMNS} FROM sys_invocation WHERE target_handler_name = 'run' AND target_service_key = ${sqlString(runId)} AND ${services}`,
    );
    const inv = rows.find((r) => workflowName(r.svc) !== undefined);
    return inv && { inv, workflow: workflowName(inv.svc)! };
  }

  private state(svc: string, runId: string): Promise<StateRow[]> {
    return this.o.admin().query<StateRow>(`SELECT key, value_utf8 FROM state WHERE service_name = ${sqlString(svc)} AND service_key = ${sqlString(runId)}`);
  }

  async getRun(runId: string): Promise<RunView | undefined> {
    const local = await this.o.local?.(runId);
    // With the workflow known from the outbox, both queries go out at once.
    const [found, early] = await Promise.all([this.invocation(runId, local?.workflow), local ? this.state(serviceName(local.workflow), runId) : undefined]);
    if (!found) {
      if (!local) {
        const issued = await this.o.issued?.(runId);
        return issued && { ...outboxView(issued), status: 'pending' };
      }
      // Not (yet) visible in Restate: written to the outbox and not accepted, or accepted a
      // moment ago. Either way no handler has run it: pending, unless its code diverged.
      const diverged = divergenceOf(local);
      return diverged ? outboxView(local) : { ...outboxView(local), status: 'pending' };
    }
    const [state, diverged] = await Promise.all([
      early ?? this.state(found.inv.svc, runId),
      divergenceOf(local) ?? (ended(found.inv) ? (await divergencesIn(this.o.admin(), [runId])).get(runId) : undefined),
    ]);
    const view = buildView(found.workflow, found.inv, collectState(state, this.o.codec), diverged);
    // A step (or the run itself: run-level flow control) waiting for a slot (queue-views.ts).
    const queued = view.status === 'running' || view.status === 'pending' ? await slotWaitOf(this.o.admin(), runId) : undefined;
    return queued ? { ...view, queued } : view;
  }

  /** One page, newest first (invocation time, then id: a total order the cursor resumes
   *  after). Status lives in each run's state, so a status filter is applied here, over
   *  batches of invocation rows, until a match past the page says there is a next one. */
  async listRuns(filter: RunFilter): Promise<RunPage> {
    if (filter.queue !== undefined) return this.listInLine(filter, filter.queue);
    const invFilter = this.serviceFilter('target_service_name', filter.workflow);
    const stateFilter = this.serviceFilter('service_name', filter.workflow);
    if (!invFilter || !stateFilter) return { runs: [] };
    const limit = filter.limit ?? DEFAULT_PAGE;
    const batch = filter.status ? Math.max(limit + 1, 200) : limit + 1;
    let after = filter.cursor === undefined ? undefined : decodeCursor('restate', filter.cursor, cursorSchema);
    // Restate's timestamps are finer than the views' milliseconds: `until` covers its whole ms.
    const span = (filter.since ? ` AND created_at >= ${sqlString(filter.since)}` : '') +
      (filter.until ? ` AND created_at < ${sqlString(new Date(Date.parse(filter.until) + 1).toISOString())}` : '');
    const found: { view: RunView; inv: InvocationRow }[] = [];
    for (;;) {
      const older = after ? ` AND (created_at < ${sqlString(after.c)} OR (created_at = ${sqlString(after.c)} AND id < ${sqlString(after.i)}))` : '';
      const invs = await this.o.admin().query<InvocationRow>(
        `SELECT ${INVOCATION_COLUMNS} FROM sys_invocation WHERE target_handler_name = 'run' AND ${invFilter}${span}${older} ORDER BY created_at DESC, id DESC LIMIT ${batch}`,
      );
      const ours = invs.filter((inv) => workflowName(inv.svc) !== undefined);
      const [state, local, diverged] = await Promise.all([
        this.listState(stateFilter, ours),
        Promise.all(ours.map((inv) => this.o.local?.(inv.run_id))),
        divergencesIn(this.o.admin(), ours.filter(ended).map((inv) => inv.run_id)),
      ]);
      ours.forEach((inv, i) => {
        const view = buildView(workflowName(inv.svc)!, inv, { ...collectState(state.get(`${inv.svc}/${inv.run_id}`) ?? [], this.o.codec), steps: [] }, divergenceOf(local[i]) ?? diverged.get(inv.run_id));
        if (!filter.status || view.status === filter.status) found.push({ view, inv });
      });
      if (found.length > limit) {
        const last = found[limit - 1]!.inv;
        return { runs: found.slice(0, limit).map((f) => f.view), next: encodeCursor('restate', { c: String(last.created_at), i: last.id }) };
      }
      if (invs.length < batch) return { runs: found.map((f) => f.view) };
      const end = invs[invs.length - 1]!;
      after = { c: String(end.created_at), i: end.id };
    }
  }

  /** The runs with a step in the queue's line, first in line first (one page: a line is
   *  short-lived, so no cursor), each with where it stands. */
  private async listInLine(filter: RunFilter, queue: string): Promise<RunPage> {
    if (filter.cursor !== undefined) throw new ValidationError('runs list --queue: the runs in a line come in one page (no cursor)');
    const line = await lineOf(this.o.admin(), queue);
    const invFilter = this.serviceFilter('target_service_name', filter.workflow);
    const stateFilter = this.serviceFilter('service_name', filter.workflow);
    if (!line || line.runIds.length === 0 || !invFilter || !stateFilter) return { runs: [] };
    const invs = (await this.o.admin().query<InvocationRow>(
      `SELECT ${INVOCATION_COLUMNS} FROM sys_invocation WHERE target_handler_name = 'run' AND ${invFilter} AND target_service_key IN (${line.runIds.map(sqlString).join(',')})`,
    )).filter((inv) => workflowName(inv.svc) !== undefined);
    const state = await this.listState(stateFilter, invs);
    const byRun = new Map(invs.map((inv) => [inv.run_id, inv]));
    const runs: RunView[] = [];
    for (const id of line.runIds) {
      const inv = byRun.get(id);
      const queued = inv && waitIn(queue, line.snapshot, id);
      if (!inv || !queued) continue;
      const view = buildView(workflowName(inv.svc)!, inv, { ...collectState(state.get(`${inv.svc}/${inv.run_id}`) ?? [], this.o.codec), steps: [] }, undefined);
      if (filter.status === undefined || view.status === filter.status) runs.push({ ...view, queued });
    }
    return { runs: runs.slice(0, filter.limit ?? DEFAULT_PAGE) };
  }

  /** `~run` and `~meta` of the given runs, by `<svc>/<runId>`; in chunks (one SQL IN list each). */
  private async listState(stateFilter: string, invs: InvocationRow[]): Promise<Map<string, StateRow[]>> {
    const chunks: InvocationRow[][] = [];
    for (let i = 0; i < invs.length; i += 500) chunks.push(invs.slice(i, i + 500));
    const rows = await Promise.all(
      chunks.map((chunk) =>
        this.o.admin().query<StateRow & { svc: string; run_id: string }>(
          `SELECT service_name AS svc, service_key AS run_id, key, value_utf8 FROM state WHERE ${stateFilter} AND key IN ('~run', '~meta') AND service_key IN (${[...new Set(chunk.map((c) => sqlString(c.run_id)))].join(',')})`,
        ),
      ),
    );
    const byRun = new Map<string, StateRow[]>();
    for (const s of rows.flat()) {
      const k = `${s.svc}/${s.run_id}`;
      const list = byRun.get(k);
      if (list) list.push(s);
      else byRun.set(k, [s]);
    }
    return byRun;
  }

  async childOutput(runId: string): Promise<ChildOutput | undefined> {
    return outputOf(this.o.admin(), runId);
  }

  async close(): Promise<void> {}
}

/** An invocation that ended without success: only such a run can have diverged (it was killed). */
const ended = (inv: InvocationRow) => inv.status === 'completed' && inv.completion_result !== 'success';
