// Restate's admin API as the engine uses it: SQL introspection, deployments, invocation
// cancel. Every call is bounded; a non-2xx answer becomes an error naming what failed.
import { StorageError } from '../../domain/errors.ts';
import { httpJson } from './http-json.ts';

export const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

export class AdminApi {
  constructor(readonly url: string) {}

  async query<T>(sql: string): Promise<T[]> {
    const r = await httpJson('POST', `${this.url}/query`, { query: sql }, { timeoutMs: 15_000 });
    if (!r.ok) throw new StorageError(`restate admin query failed (${r.status}): ${r.text.slice(0, 300)}`);
    return ((r.json as { rows?: T[] })?.rows ?? []) as T[];
  }

  async deployments(): Promise<{ id: string; uri?: string; metadata?: Record<string, string> }[]> {
    const r = await httpJson('GET', `${this.url}/deployments`);
    if (!r.ok) throw new StorageError(`restate admin: listing deployments failed (${r.status})`);
    return ((r.json as { deployments?: { id: string; uri?: string; metadata?: Record<string, string> }[] })?.deployments ?? []);
  }

  async register(uri: string, metadata: Record<string, string>): Promise<void> {
    const r = await httpJson('POST', `${this.url}/deployments`, { uri, force: false, metadata });
    if (!r.ok) throw new StorageError(`restate admin: registering ${uri} failed (${r.status}): ${r.text.slice(0, 300)}`);
  }

  async repoint(id: string, uri: string): Promise<void> {
    const r = await httpJson('PATCH', `${this.url}/deployments/${id}`, { uri });
    if (!r.ok) throw new StorageError(`restate admin: repointing deployment ${id} to ${uri} failed (${r.status}): ${r.text.slice(0, 300)}`);
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
