// The Runs panel (issue 15; docs/panel.md): a Hono app over the engine API, served by
// `tranquil serve` on 127.0.0.1 and mountable by a host app (`createPanel(engine).app`).
// Reads go through engine.runs / schedules / events (the backend's own reads, the ones the
// CLI's conformance cases check against), so it says the same on SQLite and Restate.
//
// Actions (retry, cancel, pause, resume, rerun, signal, approve) are POSTs guarded twice: the
// per-panel token (32 random bytes, embedded in the pages' forms, compared in constant time)
// and the request's Origin (or, without one, Sec-Fetch-Site) must be this panel's own. Under `tranquil dev`
// (`holds`) every page also shows the runs a reload would diverge from, with the step, and
// offers the decision: keep the old code for them, or let them fail. With `allowedHosts`
// (what serve passes) any request whose Host is not one of them is refused, so a DNS-rebound
// page cannot read the token either.
import { randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import * as z from 'zod';
import { APPROVAL_REQUIRED } from '../../domain/approval.ts';
import { toErrorInfo } from '../../domain/errors.ts';
import { parseOrThrow } from '../../domain/validate.ts';
import { RUN_STATUSES, type RunStatus } from '../../domain/run-status.ts';
import type { Engine } from '../../runtime/engine.ts';
import { listen } from './listen.ts';
import { actions, esc, eventsPage, heldBlock, liveOutput, page, runDetails, runsFilters, runsTable, schedulesPage, stepEventsBlock, timeline, whyBlock, type ListQuery, type LiveSource } from './panel-html.ts';
import { liveEvents } from './panel-live.ts';
import { queuesBlock } from './panel-queues.ts';
import { secretsEqual } from './secret-compare.ts';

/** createPanel's options. */
export interface PanelOptions {
  /** Where the host app mounts it (`/tranquil`); '' when it owns the origin. */
  basePath?: string;
  /** Host headers accepted (e.g. `127.0.0.1:4000`); undefined = any (the host app decides). */
  allowedHosts?: string[];
  /** Runs per page of the list. */
  pageSize?: number;
  /** The runs `tranquil dev` holds, and the decision on them (what `tranquil dev` passes). */
  holds?: PanelHolds;
  /** The pages' fallback poll of their live part, in ms (default 5000; 0: none). The pages
   *  update from the engine's step events as they happen; the poll is for what this process
   *  hears no event of (runs executed by another process, runs created or held with no step). */
  pollMs?: number;
}

/** A run held because the code a reload brought would diverge from what it recorded. */
export interface HeldRun {
  runId: string;
  workflow: string;
  /** The journal position where the new code and the run part ways (the step's index). */
  position?: number;
  /** What the new code calls there, e.g. `do 'extra'`. */
  expected?: string;
  /** What the run recorded there, e.g. `sleep 'nap'`. */
  recorded?: string;
  /** The divergence in one line, as the terminal says it. */
  detail: string;
}

/** Where the panel reads the held runs and sends the user's decision. */
export interface PanelHolds {
  /** The runs held now (empty when none). */
  list(): readonly HeldRun[];
  /** `keep`: the held runs go on on the code they started with; `fail`: they replay the new
   *  code (and fail with NonDeterminismError). Resolves with a one-line note once done. */
  decide(answer: 'keep' | 'fail'): Promise<string>;
}

/** The Runs panel (docs/panel.md) as a Hono app the host mounts in its own server. */
export interface Panel {
  /** The app, its routes already under `basePath`: mount it at the root (`app.route('/', panel.app)`). */
  app: Hono;
  /** The action token embedded in the pages. */
  readonly token: string;
}

const listQuery = z.object({
  workflow: z.string().max(200).optional().transform((v) => v || undefined),
  status: z.union([z.enum(RUN_STATUSES), z.literal('')]).optional().transform((v) => (v || undefined) as RunStatus | undefined),
  cursor: z.string().max(1000).optional().transform((v) => v || undefined),
  since: z.string().max(40).optional().transform((v) => v || undefined),
  until: z.string().max(40).optional().transform((v) => v || undefined),
  flash: z.string().max(500).optional(),
});
const decideForm = z.object({ answer: z.enum(['keep', 'fail']), run: z.string().max(1000).default('') });
const signalForm = z.object({ name: z.string().min(1, 'signal name must not be empty').max(200), data: z.string().max(1_000_000).optional() });

export function createPanel(engine: Engine, o: PanelOptions = {}): Panel {
  const token = randomBytes(32).toString('base64url');
  const base = (o.basePath ?? '').replace(/\/$/, '');
  const app = new Hono();
  const r = base ? app.basePath(base) : app;

  app.use('*', async (c, next) => {
    if (o.allowedHosts && !o.allowedHosts.includes(c.req.header('host') ?? '')) return c.text('unknown Host', 403);
    c.header('x-frame-options', 'DENY');
    c.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'");
    // Not no-referrer: with it a browser sends `Origin: null` on form POSTs, defeating the check.
    c.header('referrer-policy', 'same-origin');
    c.header('cache-control', 'no-store');
    await next();
  });

  const pollMs = parseOrThrow(z.number().int().min(0).max(3_600_000), o.pollMs ?? 5000, 'panel pollMs');
  /** The page, or only its live part when the refresh script asks; `push`: its step events' URL. */
  const render = (c: Context, title: string, fixed: string, live: string, push?: string, tail = '') =>
    c.req.header('x-panel-fragment') ? c.html(live) : c.html(page(title, base, fixed, live, { push, pollMs } satisfies LiveSource, tail));
  const holds = () => o.holds?.list() ?? [];
  const held = (run: string) => heldBlock(base, holds(), token, run);
  const flash = (c: Context) => {
    const f = c.req.query('flash');
    return f ? `<div class="flash" id="flash">${esc(f)}</div>` : '';
  };

  r.get('/', async (c) => {
    const q = listQuery.safeParse(c.req.query());
    if (!q.success) return c.html(page('Runs', base, `<p class="err">bad filter: ${esc(q.error.issues[0]?.message)}</p>`, ''), 400);
    const query: ListQuery = q.data;
    try {
      const [list, queues] = await Promise.all([
        engine.runs.list({ workflow: query.workflow, status: query.status as RunStatus | undefined, since: query.since, until: query.until, cursor: query.cursor, limit: o.pageSize ?? 50 }),
        // A queue read that fails (Restate's admin API away) costs the rows, not the list.
        engine.queues.list().catch((err: unknown) => toErrorInfo(err)),
      ]);
      const h = holds();
      const rows = Array.isArray(queues) ? queuesBlock(queues) : `<p class="err" id="queues">queues: ${esc(queues.message)}</p>`;
      const live = `${held(h[0]?.runId ?? '')}${rows}${runsTable(base, list, query, list.next, new Set(h.map((x) => x.runId)))}`;
      return render(c, 'Runs', `${flash(c)}<h2>Runs</h2>${runsFilters(base, query, RUN_STATUSES)}`, live, `${base}/live`);
    } catch (err) {
      return c.html(page('Runs', base, `<h2>Runs</h2>${runsFilters(base, query, RUN_STATUSES)}<p class="err" id="flash">${esc(toErrorInfo(err).message)}</p>`, ''), 400);
    }
  });

  r.get('/runs/:id', async (c) => {
    const id = c.req.param('id');
    let run;
    try {
      run = await engine.runs.get(id);
    } catch (err) {
      return c.html(page('Run', base, `<p class="err">${esc(toErrorInfo(err).message)}</p>`, ''), 404);
    }
    const e = await engine.runs.explain(id);
    const approvable = run.status === 'blocked' && run.error?.name === APPROVAL_REQUIRED;
    const live = `${held(id)}${whyBlock(e)}${actions(base, run, token, approvable)}${liveOutput(run)}<h3>Timeline</h3>${timeline(run, Date.now())}${runDetails(run)}`;
    const live0 = !['succeeded', 'failed', 'cancelled'].includes(run.status);
    const signal = live0
      ? `<form class="inline" method="post" action="${base}/runs/${encodeURIComponent(id)}/signal"><input type="hidden" name="_token" value="${esc(token)}">
<input name="name" placeholder="signal name" required> <input name="data" placeholder='JSON payload, e.g. {"ok":true}' size="30"> <button id="signal">Send signal</button></form>`
      : '';
    return render(c, `Run ${id}`, `${flash(c)}<h2>Run <span id="run-id">${esc(id)}</span></h2>${signal}`, live, `${base}/runs/${encodeURIComponent(id)}/live`, stepEventsBlock());
  });

  // The pages' push (panel-live.ts): every run's step events for the list, one run's for its page.
  r.get('/live', (c) => liveEvents(c, engine));
  r.get('/runs/:id/live', async (c) => {
    const id = c.req.param('id');
    try {
      await engine.runs.get(id);
    } catch (err) {
      return c.text(toErrorInfo(err).message, 404);
    }
    return liveEvents(c, engine, id);
  });

  r.get('/schedules', async (c) => {
    const [schedules, slots] = await Promise.all([engine.schedules.list(), engine.schedules.slots({ limit: 200 })]);
    return render(c, 'Schedules', '', schedulesPage(schedules, slots));
  });

  r.get('/events', async (c) => render(c, 'Events', '', eventsPage(base, await engine.events.list({ limit: 200 }))));

  // ---- actions: token + same origin, then the engine call; back to the run page with a note.
  const act = (path: string, fn: (c: Context, form: Record<string, string>) => Promise<{ run: string; note: string }>) =>
    r.post(path, async (c) => {
      const own = new URL(c.req.url).origin;
      const origin = c.req.header('origin');
      const site = c.req.header('sec-fetch-site');
      if (origin !== undefined ? origin !== own : site !== undefined && site !== 'same-origin' && site !== 'none') {
        return c.text('refused: cross-origin request', 403);
      }
      const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
      const form = Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
      if (!secretsEqual(form._token ?? '', token)) return c.text('refused: bad or missing panel token', 403);
      let runId = c.req.param('id') ?? form.run ?? '';
      let note: string;
      try {
        const done = await fn(c, form);
        runId = done.run;
        note = done.note;
      } catch (err) {
        const info = toErrorInfo(err);
        note = `${info.name}: ${info.message}`;
      }
      return c.redirect(`${base}/runs/${encodeURIComponent(runId)}?flash=${encodeURIComponent(note)}`, 303);
    });

  act('/runs/:id/retry', async (c) => {
    const id = c.req.param('id')!;
    const res = await engine.runs.retry(id);
    return { run: id, note: `retried${res.from ? ` from step '${res.from.name}'` : ''}` };
  });
  act('/runs/:id/cancel', async (c) => {
    const id = c.req.param('id')!;
    await engine.runs.cancel(id, { by: 'panel' });
    return { run: id, note: 'cancel requested' };
  });
  act('/runs/:id/pause', async (c) => {
    const id = c.req.param('id')!;
    await engine.runs.pause(id, { by: 'panel' });
    return { run: id, note: 'pause requested: it stops at its next step boundary' };
  });
  act('/runs/:id/resume', async (c) => {
    const id = c.req.param('id')!;
    const res = await engine.runs.resume(id);
    return { run: id, note: res.resumed === 'paused' ? 'resumed' : `resumed the cancelled run${res.from ? ` from step '${res.from.name}'` : ''}` };
  });
  act('/runs/:id/rerun', async (c) => {
    const id = c.req.param('id')!;
    const res = await engine.runs.rerun(id);
    return { run: res.runId, note: `rerun of ${id} started` };
  });
  act('/runs/:id/signal', async (c, form) => {
    const id = c.req.param('id')!;
    const f = signalForm.parse(form);
    let data: unknown = null;
    if (f.data?.trim()) {
      try {
        data = JSON.parse(f.data);
      } catch (err) {
        throw new Error(`payload is not valid JSON (${(err as Error).message}); nothing sent`);
      }
    }
    await engine.signal(id, f.name, data);
    return { run: id, note: `signal '${f.name}' sent` };
  });
  act('/workflows/:name/pause', async (c, form) => {
    const p = await engine.workflows.pause(c.req.param('name')!, { by: 'panel' });
    return { run: form.run ?? '', note: `workflow ${p.workflow} paused by ${p.by}: its new runs are held until it is resumed` };
  });
  act('/workflows/:name/resume', async (c, form) => {
    const r = await engine.workflows.resume(c.req.param('name')!, { held: form.held === 'skip' ? 'skip' : 'run' });
    return { run: form.run ?? '', note: `workflow ${r.workflow} resumed; ${r.runs.length} held run(s) ${r.held === 'skip' ? 'skipped' : 'resumed'}` };
  });
  act('/workflows/:name/approve', async (c, form) => {
    const res = await engine.workflows.approve(c.req.param('name')!, form.hash ? { hash: form.hash } : {});
    return { run: form.run ?? res.released[0] ?? '', note: `approved declaration ${res.hash}; released ${res.released.length} run(s)` };
  });

  if (o.holds) {
    const h = o.holds;
    act('/holds/decide', async (_c, form) => {
      const f = decideForm.parse(form);
      return { run: f.run, note: await h.decide(f.answer) };
    });
  }

  return { app, token };
}

/** The panel on its own loopback listener (what `tranquil serve` starts). */
export async function servePanel(engine: Engine, o: { host?: string; port?: number; holds?: PanelHolds; pollMs?: number } = {}): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const host = o.host ?? '127.0.0.1';
  // The Host header names the port, known only once bound: the check reads it late.
  const hosts: string[] = [];
  const panel = createPanel(engine, { allowedHosts: hosts, holds: o.holds, pollMs: o.pollMs });
  const l = await listen(panel.app, host, o.port ?? 0);
  hosts.push(`${host}:${l.port}`, `localhost:${l.port}`);
  return { url: `http://${host}:${l.port}/`, token: panel.token, close: () => l.close() };
}
