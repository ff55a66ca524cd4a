// `tranquil serve --on-failure-exec <cmd>` / `--on-failure-post <url>` (issue 15): on a run's
// terminal failure serve runs a command or POSTs to a loopback URL, fed by engine.on
// ('run.failed') (runtime/notifier.ts: once per transition, also for failures that happened
// while serve was down). The command runs through /bin/sh with the event as JSON on stdin and
// TRANQUIL_EVENT, TRANQUIL_RUN_ID, TRANQUIL_WORKFLOW, TRANQUIL_ERROR in its environment; the
// POST sends the same JSON. Only loopback URLs are accepted: serve never calls out.
import { spawn } from 'node:child_process';
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import type { Engine } from '../src/runtime/engine.ts';
import type { LifecycleEvent } from '../src/runtime/notifier.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export const loopbackUrl = z.string().transform((s, ctx) => {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    ctx.addIssue({ code: 'custom', message: `not a URL: '${s}'` });
    return z.NEVER;
  }
  if (u.protocol !== 'http:' || !LOOPBACK.has(u.hostname)) {
    ctx.addIssue({ code: 'custom', message: `only http://127.0.0.1, localhost or [::1] URLs are allowed, got '${s}'` });
    return z.NEVER;
  }
  return u.toString();
});

export function parseLoopbackUrl(v: string): string {
  const r = loopbackUrl.safeParse(v);
  if (!r.success) throw new ValidationError(`--on-failure-post: ${r.error.issues[0]?.message}`);
  return r.data;
}

/** Subscribes the configured hooks; each failure is reported on stderr if its hook fails. */
export function onFailure(engine: Engine, o: { exec?: string; post?: string }): () => void {
  if (!o.exec && !o.post) return () => {};
  return engine.on('run.failed', async (e) => {
    await Promise.all([o.exec ? exec(o.exec, e) : undefined, o.post ? post(o.post, e) : undefined]);
  });
}

function exec(cmd: string, e: LifecycleEvent): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', cmd], {
      stdio: ['pipe', 'inherit', 'inherit'],
      env: { ...process.env, TRANQUIL_EVENT: e.type, TRANQUIL_RUN_ID: e.runId, TRANQUIL_WORKFLOW: e.workflow, TRANQUIL_ERROR: e.error ? `${e.error.name}: ${e.error.message}` : '' },
    });
    child.stdin.end(JSON.stringify(e));
    child.once('error', (err) => (console.error(`tranquil serve: --on-failure-exec for run ${e.runId}: ${err.message}`), resolve()));
    child.once('close', (code) => {
      if (code !== 0) console.error(`tranquil serve: --on-failure-exec for run ${e.runId} exited ${code}`);
      resolve();
    });
  });
}

async function post(url: string, e: LifecycleEvent): Promise<void> {
  try {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(e), signal: AbortSignal.timeout(10_000) });
    if (!r.ok) console.error(`tranquil serve: --on-failure-post for run ${e.runId}: HTTP ${r.status}`);
  } catch (err) {
    console.error(`tranquil serve: --on-failure-post for run ${e.runId}: ${(err as Error).message}`);
  }
}
