// Restate's admin API as the engine uses it: SQL introspection, deployments, invocation
// cancel. Every call is bounded; a non-2xx answer becomes a BackendUnavailableError naming
// what failed (the server refused now: callers that retry, retry on that class). A query (a
// read) that the server answers with a 5xx is itself retried for a few seconds first: a
// cluster node answers 500 ("expecting a partition store") while one of its partitions'
// stores is still opening or moving, and that passes. A server that does not answer at all
// (stopped, unreachable) is not waited for here: the callers decide.
import { BackendUnavailableError } from '../../domain/errors.ts';
import { httpJson } from './http-json.ts';

export const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** SQL queries in flight at once. Each costs the server ~5-60 ms of CPU (more with history);
 *  beyond a few, extra ones only queue inside restate-server, competing with the runs, while
 *  their timeouts tick. Queued here they wait without a timer and the server stays responsive. */
const MAX_QUERIES_IN_FLIGHT = 8;

/** How long a query keeps being retried after a 5xx answer, from its first attempt. */
export const QUERY_SETTLE_MS = 5000;

export class AdminApi {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly url: string,
    private readonly settleMs = QUERY_SETTLE_MS,
  ) {}

  async query<T>(sql: string): Promise<T[]> {
    if (this.inFlight < MAX_QUERIES_IN_FLIGHT) this.inFlight++;
    else await new Promise<void>((r) => this.waiting.push(r)); // the slot is handed over
    try {
      const deadline = Date.now() + this.settleMs;
      for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
        const r = await httpJson('POST', `${this.url}/query`, { query: sql }, { timeoutMs: 15_000 });
        if (r.ok) return ((r.json as { rows?: T[] })?.rows ?? []) as T[];
        // A 4xx: the query itself was refused, and asking again cannot help.
        if (r.status < 500 || Date.now() + wait > deadline) throw new BackendUnavailableError(`restate admin query failed (${r.status}): ${r.text.slice(0, 300)}`);
        await new Promise((res) => setTimeout(res, wait));
      }
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  async deployments(): Promise<{ id: string; uri?: string; metadata?: Record<string, string> }[]> {
    const r = await httpJson('GET', `${this.url}/deployments`);
    if (!r.ok) throw new BackendUnavailableError(`restate admin: listing deployments failed (${r.status})`);
    return ((r.json as { deployments?: { id: string; uri?: string; metadata?: Record<string, string> }[] })?.deployments ?? []);
  }

  async register(uri: string, metadata: Record<string, string>): Promise<void> {
    const r = await httpJson('POST', `${this.url}/deployments`, { uri, force: false, metadata });
    if (!r.ok) throw new BackendUnavailableError(`restate admin: registering ${uri} failed (${r.status}): ${r.text.slice(0, 300)}`);
  }

  async repoint(id: string, uri: string): Promise<void> {
    const r = await httpJson('PATCH', `${this.url}/deployments/${id}`, { uri });
    if (!r.ok) throw new BackendUnavailableError(`restate admin: repointing deployment ${id} to ${uri} failed (${r.status}): ${r.text.slice(0, 300)}`);
  }

  /** Removes a deployment. Restate deletes only with force (501 otherwise); callers check
   *  first that no live invocation is pinned to it. Returns the HTTP status. */
  async deleteDeployment(id: string): Promise<number> {
    return (await httpJson('DELETE', `${this.url}/deployments/${id}?force=true`)).status;
  }

  /** Returns the HTTP status (202 cancelled, 409 already completed, 404 unknown). */
  async cancel(invocationId: string): Promise<number> {
    return (await httpJson('PATCH', `${this.url}/invocations/${invocationId}/cancel`)).status;
  }

  async kill(invocationId: string): Promise<number> {
    return (await httpJson('PATCH', `${this.url}/invocations/${invocationId}/kill`)).status;
  }

  async resume(invocationId: string): Promise<number> {
    return (await httpJson('PATCH', `${this.url}/invocations/${invocationId}/resume`)).status;
  }
}
