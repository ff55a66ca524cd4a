// RunReader on Restate: every run Restate has accepted is read from the admin API's SQL
// introspection (the invocation row + the workflow's own state, see run-views.ts). The local
// index is asked only for what Restate cannot know: a run written to the outbox and not yet
// visible in Restate (answered as `pending`), and a divergence this engine recorded. The
// engine's RestateExecutor and the CLI use this same class.
import type { RunFilter, RunView } from '../../domain/run-view.ts';
import type { OutboxLookup, RunReader } from '../../ports/run-reader.ts';
import { divergenceOf, outboxView } from './outbox-view.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { buildView, collectState, INVOCATION_COLUMNS, type InvocationRow } from './run-views.ts';
import { serviceName, workflowName } from './workflow-service.ts';

export interface RestateRunReaderOptions {
  admin: () => AdminApi;
  /** Workflows whose runs this reader sees; undefined = every Tranquil service on the server. */
  workflows?: readonly string[];
  /** The trigger store's run outbox (pending runs, recorded divergences); absent = none
   *  (a reader with no local file). */
  local?: OutboxLookup;
}

type StateRow = { key: string; value_utf8: string | null };

export class RestateRunReader implements RunReader {
  private readonly services: string[] | undefined;

  constructor(private readonly o: RestateRunReaderOptions) {
    this.services = o.workflows?.map(serviceName);
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
      if (!local) return undefined;
      // Not (yet) visible in Restate: written to the outbox and not accepted, or accepted a
      // moment ago. Either way no handler has run it: pending, unless its code diverged.
      const diverged = divergenceOf(local);
      return diverged ? outboxView(local) : { ...outboxView(local), status: 'pending' };
    }
    const state = early ?? (await this.state(found.inv.svc, runId));
    return buildView(found.workflow, found.inv, collectState(state), divergenceOf(local));
  }

  async listRuns(filter: RunFilter): Promise<RunView[]> {
    const invFilter = this.serviceFilter('target_service_name', filter.workflow);
    const stateFilter = this.serviceFilter('service_name', filter.workflow);
    if (!invFilter || !stateFilter) return [];
    const admin = this.o.admin();
    const [invs, state] = await Promise.all([
      admin.query<InvocationRow>(`SELECT ${INVOCATION_COLUMNS} FROM sys_invocation WHERE target_handler_name = 'run' AND ${invFilter} ORDER BY created_at DESC`),
      admin.query<StateRow & { svc: string; run_id: string }>(
        `SELECT service_name AS svc, service_key AS run_id, key, value_utf8 FROM state WHERE ${stateFilter} AND key IN ('~run', '~meta')`,
      ),
    ]);
    const byRun = new Map<string, StateRow[]>();
    for (const s of state) {
      const k = `${s.svc}/${s.run_id}`;
      byRun.set(k, [...(byRun.get(k) ?? []), s]);
    }
    const ours = invs.filter((inv) => workflowName(inv.svc) !== undefined);
    const local = await Promise.all(ours.map((inv) => this.o.local?.(inv.run_id)));
    const views = ours
      .map((inv, i) => buildView(workflowName(inv.svc)!, inv, { ...collectState(byRun.get(`${inv.svc}/${inv.run_id}`) ?? []), steps: [] }, divergenceOf(local[i])))
      .filter((v) => !filter.status || v.status === filter.status);
    return views.slice(0, filter.limit ?? 100);
  }

  async close(): Promise<void> {}
}
