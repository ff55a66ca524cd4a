// Child-run links kept in Restate when the engine runs as a cluster (triggers: 'restate'):
// the local trigger store holds the links this replica wrote, but a parent started through
// one replica may start its children through another (its handler runs wherever the load
// balancer sends it), so listing a run's children, cancelling it (the cascade lists them) or
// reading a child's parent must see every replica's links. One virtual object per run id,
// `tqlinks`: state `children` (the runs it started, in start order) and `parent` (its link).
// Both writes are idempotent (a child is added once), so a start retried after a crash
// writes nothing twice. Reads are admin SQL over the object's state.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import { BackendUnavailableError } from '../../domain/errors.ts';
import type { ParentLink } from '../../domain/child-runs.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { retryWhileUnknown } from './deployments.ts';
import { httpJson } from './http-json.ts';
import type { LinkReads } from './child-links.ts';

export const LINKS = 'tqlinks';

export function buildClusterLinks() {
  return restate.object({
    name: LINKS,
    handlers: {
      addChild: async (ctx: restate.ObjectContext, childId: string): Promise<void> => {
        const children = (await ctx.get<string[]>('children')) ?? [];
        if (children.includes(childId)) return;
        children.push(childId);
        ctx.set('children', children);
      },
      setParent: async (ctx: restate.ObjectContext, link: ParentLink): Promise<void> => {
        if (!(await ctx.get<ParentLink>('parent'))) ctx.set('parent', link);
      },
    },
  });
}

/** The engine side: writes through ingress, reads through admin SQL. */
export class ClusterLinks {
  constructor(
    private readonly ingress: () => string,
    private readonly admin: () => AdminApi,
  ) {}

  /** Before the child's run is forwarded: a replica that lists the parent's children sees it. */
  async link(childId: string, parent: ParentLink): Promise<void> {
    await Promise.all([this.call(parent.runId, 'addChild', childId), this.call(childId, 'setParent', parent)]);
  }

  private async call(key: string, method: string, body: unknown): Promise<void> {
    const r = await retryWhileUnknown(() => httpJson('POST', `${this.ingress()}/${LINKS}/${encodeURIComponent(key)}/${method}`, body));
    if (!r.ok) throw new BackendUnavailableError(`restate ${LINKS}/${method} failed (${r.status}): ${r.text.slice(0, 200)}`);
  }

  private async state<T>(runId: string, key: string): Promise<T | undefined> {
    const rows = await this.admin().query<{ value_utf8: string | null }>(`SELECT value_utf8 FROM state WHERE service_name = ${sqlString(LINKS)} AND service_key = ${sqlString(runId)} AND key = ${sqlString(key)}`);
    const text = rows[0]?.value_utf8;
    return text ? (JSON.parse(text) as T) : undefined;
  }

  /** The local store's links first (no query), then the cluster's. */
  over(local: LinkReads): LinkReads {
    return {
      parentOf: async (runId) => (await local.parentOf?.(runId)) ?? (await this.state<ParentLink>(runId, 'parent')),
      childRunIds: async (runId) => {
        const mine = (await local.childRunIds?.(runId)) ?? [];
        const all = (await this.state<string[]>(runId, 'children')) ?? [];
        return [...all, ...mine.filter((id) => !all.includes(id))];
      },
    };
  }
}
