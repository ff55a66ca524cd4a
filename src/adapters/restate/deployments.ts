// Deployments: how this process's SDK endpoint is made known to Restate, once per code
// version, and the one tolerance a cluster needs right after that.
//
// Earlier deployments of this app with no live invocation pinned to them are removed.
//
// Two modes:
// - per-process endpoint (no `restate.endpoint.url`): the deployment URI is this process's own
//   address; deployments this data dir registered earlier (metadata `tranquil` = its engine
//   id) are repointed to the current port, so runs pinned to them keep being served.
// - shared URL (`restate.endpoint.url`, e.g. a load balancer in front of replicas): every
//   replica of the same code computes the same URI (`<url>v/<tag>/`); whichever registers
//   first creates the deployment and the others find it: same URL + same code version = one
//   deployment. Nothing is repointed: the URL does not move with a process.
import type { HttpResult } from './http-json.ts';
import { sqlString, type AdminApi } from './admin-api.ts';

export interface DeploymentPlan {
  /** `http://host:port/` or the configured URL, ending in `/`. */
  base: string;
  /** Digest of the code version (workflow versions + what the endpoint serves). */
  tag: string;
  /** This data dir's id (metadata of what it registers). */
  engineId: string;
  /** A configured URL shared by replicas: do not repoint by engine id. */
  shared: boolean;
  /** Service names this endpoint serves (to resume their stuck invocations). */
  services: string[];
}

export const deploymentUri = (p: Pick<DeploymentPlan, 'base' | 'tag'>): string => `${p.base}v/${p.tag}/`;

/** Registers the plan's deployment unless it exists; resumes invocations of our services that
 *  backed off while no endpoint answered. Safe to run from several replicas at once. */
export async function registerDeployments(admin: AdminApi, p: DeploymentPlan): Promise<void> {
  const uri = deploymentUri(p);
  const all = await admin.deployments();
  let known = all.some((d) => d.uri === uri);
  if (!p.shared) {
    const mine = all.filter((d) => d.metadata?.tranquil === p.engineId);
    for (const d of mine) {
      const target = `${p.base}${(d.uri ? new URL(d.uri).pathname : '/').replace(/^\//, '')}`;
      if (d.uri !== target) await admin.repoint(d.id, target);
    }
    known ||= mine.some((d) => d.uri && new URL(d.uri).pathname === `/v/${p.tag}/`);
  }
  if (!known) {
    try {
      await admin.register(uri, { tranquil: p.engineId, tag: p.tag });
    } catch (err) {
      // Another replica registered the same URI a moment before us: that is the one deployment.
      if (!(await admin.deployments()).some((d) => d.uri === uri)) throw err;
    }
  }
  await removeIdle(admin, earlier(all, p));
  if (p.services.length === 0) return;
  const stuck = await admin.query<{ id: string }>(
    `SELECT id FROM sys_invocation WHERE status = 'backing-off' AND target_service_name IN (${p.services.map(sqlString).join(',')})`,
  );
  await Promise.all(stuck.map((s) => admin.resume(s.id)));
}

/** Our deployments other than the plan's: older code versions of this app (registered by
 *  this data dir, or under the shared URL). */
function earlier(all: { id: string; uri?: string; metadata?: Record<string, string> }[], p: DeploymentPlan): { id: string }[] {
  const uri = deploymentUri(p);
  return all.filter((d) => d.uri !== uri && (p.shared ? d.uri?.startsWith(p.base) : d.metadata?.tranquil === p.engineId));
}

/** Hygiene while the engine runs (every `restate.deploymentSweep`): the earlier deployments
 *  whose last pinned run finished since the start are removed without waiting for a restart. */
export async function sweepDeployments(admin: AdminApi, p: DeploymentPlan): Promise<void> {
  await removeIdle(admin, earlier(await admin.deployments(), p));
}

/** Deployment hygiene: our earlier deployments (older code versions) that no live invocation
 *  is pinned to are removed; new invocations pin to the newest deployment, so none can pin to
 *  them after this look. Best effort: what fails now is tried again at the next start. */
async function removeIdle(admin: AdminApi, candidates: { id: string }[]): Promise<void> {
  if (candidates.length === 0) return;
  const live = new Set(
    (await admin.query<{ d: string }>(`SELECT DISTINCT pinned_deployment_id AS d FROM sys_invocation WHERE status != 'completed' AND pinned_deployment_id IS NOT NULL`)).map((r) => r.d),
  );
  await Promise.all(candidates.filter((d) => !live.has(d.id)).map((d) => admin.deleteDeployment(d.id).catch(() => 0)));
}

/** How long an ingress 404 is taken for "this node has not learned the deployment yet". */
export const UNKNOWN_SERVICE_GRACE_MS = 3000;

/** Calls ingress, retrying a 404 for a bounded time: right after a deployment is registered
 *  through one node of a cluster, another node's ingress answers 404 (unknown service) for up
 *  to ~1 s while the schema spreads. Our own services exist, so a 404 there is only that. */
export async function retryWhileUnknown(call: () => Promise<HttpResult>, graceMs = UNKNOWN_SERVICE_GRACE_MS): Promise<HttpResult> {
  const deadline = Date.now() + graceMs;
  for (let wait = 25; ; wait = Math.min(wait * 2, 400)) {
    const r = await call();
    if (r.status !== 404 || Date.now() + wait > deadline) return r;
    await new Promise((res) => setTimeout(res, wait));
  }
}

/** A base URL for host:port, IPv6 literals in brackets. */
export function endpointBase(host: string, port: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${port}/`;
}
