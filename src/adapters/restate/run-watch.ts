// One shared look at the admin SQL view for every engine.result() that is waiting, instead of
// one look per waiter. Restate's attach (and this process's run handler) say when a run
// finishes; what they cannot say is that a run served elsewhere is parked failed (it never
// completes) or that attach was lost. For those, every waiting run is checked in one batched
// query per tick: with 1000 waiters, per-waiter queries (two each, ~7-25 ms of server CPU
// apiece and growing with history) starved restate-server of the CPU its runs needed, so
// queries timed out and result() failed. The tick stretches with the query's own cost so the
// SQL view never takes more than a small share of the server.
import { sqlString, type AdminApi } from './admin-api.ts';

/** Runs whose wait is younger than this are not checked: attach answers those. */
const MIN_AGE_MS = 1000;
const BASE_TICK_MS = 1000;
/** The tick is at least this many times the last check's duration (<= ~10% of the server). */
const COST_FACTOR = 10;
const MAX_TICK_MS = 10_000;
/** Keys per query: one IN list of 500 costs the server about what a single-key query does x4. */
const CHUNK = 500;

interface Watched {
  svc: string;
  since: number;
  count: number;
}

export class RunWatch {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private stopped = false;
  private tickMs = BASE_TICK_MS;

  /** wake(runId): the run completed or is parked failed; its waiter should read the view. */
  constructor(
    private readonly admin: () => AdminApi,
    private readonly wake: (runId: string) => void,
  ) {}

  /** Watches runId (of Restate service svc) until the returned function is called. */
  add(runId: string, svc: string): () => void {
    const w = this.watched.get(runId);
    if (w) w.count++;
    else this.watched.set(runId, { svc, since: Date.now(), count: 1 });
    this.arm();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      const cur = this.watched.get(runId);
      if (cur && --cur.count <= 0) this.watched.delete(runId);
    };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer || this.checking || this.stopped || this.watched.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, this.tickMs);
    this.timer.unref?.();
  }

  private async check(): Promise<void> {
    this.checking = true;
    const t0 = Date.now();
    try {
      const bySvc = new Map<string, string[]>();
      for (const [runId, w] of this.watched) {
        if (t0 - w.since < MIN_AGE_MS) continue;
        const ids = bySvc.get(w.svc);
        if (ids) ids.push(runId);
        else bySvc.set(w.svc, [runId]);
      }
      const chunks: { svc: string; ids: string[] }[] = [];
      for (const [svc, ids] of bySvc) for (let i = 0; i < ids.length; i += CHUNK) chunks.push({ svc, ids: ids.slice(i, i + CHUNK) });
      // One chunk at a time: the point is to stay a small load on the server.
      for (const c of chunks) {
        if (this.stopped) return;
        for (const runId of await this.worthALook(c.svc, c.ids)) if (this.watched.has(runId)) this.wake(runId);
      }
    } catch {
      // The server restarting or overloaded: look again at the next tick.
    } finally {
      this.checking = false;
      this.tickMs = Math.min(MAX_TICK_MS, Math.max(BASE_TICK_MS, COST_FACTOR * (Date.now() - t0)));
      this.arm();
    }
  }

  /** Of these runs, those whose invocation completed or whose handler recorded `failed` or
   *  `cancelled` (both park: run-handler.ts, run-continue.ts). */
  private async worthALook(svc: string, ids: string[]): Promise<string[]> {
    const inList = ids.map(sqlString).join(',');
    const [done, states] = await Promise.all([
      this.admin().query<{ k: string }>(
        `SELECT target_service_key AS k FROM sys_invocation WHERE target_handler_name = 'run' AND target_service_name = ${sqlString(svc)}
         AND status = 'completed' AND target_service_key IN (${inList})`,
      ),
      this.admin().query<{ k: string; v: string | null }>(
        `SELECT service_key AS k, value_utf8 AS v FROM state WHERE service_name = ${sqlString(svc)} AND key = '~run' AND service_key IN (${inList})`,
      ),
    ]);
    const out = new Set(done.map((r) => r.k));
    for (const s of states) {
      try {
        const status = s.v ? (JSON.parse(s.v) as { status?: string }).status : undefined;
        if (status === 'failed' || status === 'cancelled') out.add(s.k);
      } catch {
        // not ours to judge
      }
    }
    return [...out];
  }
}
