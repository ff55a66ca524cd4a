// Workflow files on Restate (docs/runner.md): what the executor adds for them. A file's run
// executes in a Deno child served from the invocation's step log (run-handler session());
// approvals live in the `tqapprovals` virtual object (approvals-object.ts), so every engine
// on the same Restate sees them; a run whose version's declaration is not approved shows
// `blocked` inside its invocation until approveFile releases it through its `release` handler.
import type { ApprovalRecord } from '../../domain/approval.ts';
import { BackendUnavailableError, type ErrorInfo } from '../../domain/errors.ts';
import type { RegisteredWorkflow, WorkflowRegistry } from '../../runtime/registry.ts';
import type { FileSessionFactory } from '../../runtime/session-factory.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { APPROVALS_OBJECT, buildApprovalsObject } from './approvals-object.ts';
import { httpJson } from './http-json.ts';
import type { RestateFiles } from './run-handler.ts';
import { serviceName } from './workflow-service.ts';

/** What the composition root hands the Restate executor for workflow files. */
export interface FileRunsOptions {
  sessions: FileSessionFactory;
  /** FileGate.blockReason: undefined when the version's declaration is approved. */
  blockReason(wf: RegisteredWorkflow, version: string, approvals: readonly ApprovalRecord[]): ErrorInfo | undefined;
}

export class RestateFileRuns {
  constructor(
    private readonly o: FileRunsOptions,
    private readonly registry: WorkflowRegistry,
    private readonly ingress: () => string,
    private readonly admin: () => AdminApi,
  ) {}

  /** True when any registered workflow is a file: only then is the approvals object served. */
  get used(): boolean {
    return this.registry.all().some((w) => w.file);
  }

  services() {
    return this.used ? [buildApprovalsObject()] : [];
  }

  serviceNames(): string[] {
    return this.used ? [APPROVALS_OBJECT] : [];
  }

  /** Kept by every run handler of this engine (RestateFiles.cancelTries). */
  private readonly cancelTries = new Map<string, number>();

  /** For the run handlers. */
  handlerFiles(): RestateFiles {
    return { sessions: this.o.sessions, current: (name) => this.registry.find(name), blockReason: (wf, v, a) => this.o.blockReason(wf, v, a), cancelTries: this.cancelTries };
  }

  /** The body `run` is sent: a file's run carries the version its trigger created it at. */
  runRequest(workflow: string, input: unknown, version: string): { input: unknown; version?: string } {
    return this.registry.find(workflow)?.file ? { input, version } : { input };
  }

  async approvals(workflow: string): Promise<ApprovalRecord[]> {
    return this.call<ApprovalRecord[]>(workflow, 'list', null);
  }

  /** Stores the approval, then releases the workflow's blocked runs; returns those it allows. */
  async approveFile(a: ApprovalRecord): Promise<string[]> {
    const approvals = await this.call<ApprovalRecord[]>(a.workflow, 'approve', a);
    const wf = this.registry.find(a.workflow);
    if (!wf) return [];
    const svc = serviceName(a.workflow);
    const rows = await this.admin().query<{ run_id: string; key: string; value_utf8: string | null }>(
      `SELECT service_key AS run_id, key, value_utf8 FROM state WHERE service_name = ${sqlString(svc)} AND key IN ('~run', '~meta')`,
    );
    const runs = new Map<string, { blocked?: boolean; version?: string }>();
    for (const r of rows) {
      const v = safeJson(r.value_utf8);
      const entry = runs.get(r.run_id) ?? {};
      if (r.key === '~run') entry.blocked = (v as { status?: string } | undefined)?.status === 'blocked';
      else entry.version = (v as { version?: string } | undefined)?.version;
      runs.set(r.run_id, entry);
    }
    const released: string[] = [];
    for (const [runId, r] of runs) {
      if (!r.blocked || !r.version || this.o.blockReason(wf, r.version, approvals) !== undefined) continue;
      const res = await httpJson('POST', `${this.ingress()}/${svc}/${encodeURIComponent(runId)}/release`, null);
      if (!res.ok) throw new BackendUnavailableError(`restate refused to release blocked run ${runId} (${res.status}): ${res.text.slice(0, 200)}`);
      released.push(runId);
    }
    return released.sort();
  }

  private async call<T>(workflow: string, method: 'list' | 'approve', body: unknown): Promise<T> {
    const res = await httpJson('POST', `${this.ingress()}/${APPROVALS_OBJECT}/${encodeURIComponent(workflow)}/${method}`, body);
    if (!res.ok) throw new BackendUnavailableError(`restate refused ${method} of approvals for '${workflow}' (${res.status}): ${res.text.slice(0, 200)}`);
    return res.json as T;
  }
}

function safeJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
