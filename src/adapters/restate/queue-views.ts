// Reads of the queues' objects (queue-object.ts) through the admin API's SQL, as run views
// already are: where a run's step waits (`why`, `runs get`'s `queued`), which runs are in a
// queue's line (`runs list --queue`), and, for the objects' lease check, which runs ended.
import type { QueueSnapshot } from '../../domain/queue-snapshot.ts';
import { waitIn } from '../../domain/queue-snapshot.ts';
import type { QueueWait } from '../../domain/rate-limit.ts';
import { busiestKeys, type QueueKeyCount, type QueueSummary as DomainQueueSummary } from '../../domain/queue-summary.ts';
import { sqlString, type AdminApi } from './admin-api.ts';
import { QUEUE_OBJECT } from './queue-object.ts';

type Row = { queue: string; value_utf8: string | null };

function parse(row: Row): QueueSnapshot | undefined {
  try {
    return row.value_utf8 ? (JSON.parse(row.value_utf8) as QueueSnapshot) : undefined;
  } catch {
    return undefined;
  }
}

/** The step of `runId` waiting for a slot, if one is. */
export async function slotWaitOf(admin: AdminApi, runId: string): Promise<QueueWait | undefined> {
  // A coarse filter in SQL (LIKE's `_` matches any one character: a superset), exact below.
  const rows = await admin.query<Row>(
    `SELECT service_key AS queue, value_utf8 FROM state WHERE service_name = ${sqlString(QUEUE_OBJECT)} AND key = 'q' AND value_utf8 LIKE ${sqlString(`%${JSON.stringify(runId)}%`)}`,
  );
  for (const row of rows) {
    const s = parse(row);
    const wait = s && waitIn(row.queue, s, runId);
    if (wait) return wait;
  }
  return undefined;
}

/** `queue`'s state and the runs with a step in its line, first in line first (each once). */
export async function lineOf(admin: AdminApi, queue: string): Promise<{ snapshot: QueueSnapshot; runIds: string[] } | undefined> {
  const rows = await admin.query<Row>(`SELECT service_key AS queue, value_utf8 FROM state WHERE service_name = ${sqlString(QUEUE_OBJECT)} AND service_key = ${sqlString(queue)} AND key = 'q'`);
  const snapshot = rows[0] && parse(rows[0]);
  if (!snapshot) return undefined;
  return { snapshot, runIds: [...new Set([...snapshot.waiters].sort((a, b) => a.order - b.order).map((w) => w.runId))] };
}

/** Of `runIds`, those whose run invocation Restate reports completed (any result): the
 *  queue objects' lease check. A run Restate shows no row for is not counted as ended (a
 *  partial answer must never free a live holder's slot). */
export async function endedRuns(admin: AdminApi, runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const out: string[] = [];
  for (let i = 0; i < runIds.length; i += 500) {
    const chunk = runIds.slice(i, i + 500);
    const rows = await admin.query<{ run_id: string }>(
      `SELECT target_service_key AS run_id FROM sys_invocation WHERE target_handler_name = 'run' AND starts_with(target_service_name, 'tq_') AND status = 'completed' AND target_service_key IN (${chunk.map(sqlString).join(',')})`,
    );
    out.push(...rows.map((r) => r.run_id));
  }
  return out;
}

/** A queue as `tranquil queues` shows it: limits, running and waiting, and per key. */
export interface QueueSummary {
  name: string;
  limits: QueueSnapshot['limits'];
  running: number;
  waiting: number;
  keys: { key: string; running: number; waiting: number }[];
}

/** Every queue object's state (an idle queue's object keeps none), by name. */
async function queueStates(admin: AdminApi): Promise<{ name: string; s: QueueSnapshot; keys: QueueKeyCount[] }[]> {
  const rows = await admin.query<Row>(`SELECT service_key AS queue, value_utf8 FROM state WHERE service_name = ${sqlString(QUEUE_OBJECT)} AND key = 'q'`);
  const out: { name: string; s: QueueSnapshot; keys: QueueKeyCount[] }[] = [];
  for (const row of rows) {
    const s = parse(row);
    if (!s) continue;
    const keys = new Map<string, QueueKeyCount>();
    const at = (key: string) => keys.get(key) ?? keys.set(key, { key, running: 0, waiting: 0 }).get(key)!;
    for (const h of s.holders) at(h.key).running++;
    for (const w of s.waiters) at(w.key).waiting++;
    out.push({ name: row.queue, s, keys: [...keys.values()] });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Every queue with something held, waiting or counted now (an idle queue's object keeps no
 *  state, so it is not listed), by name; its keys the busiest first (at most 50). */
export async function queueSummaries(admin: AdminApi): Promise<QueueSummary[]> {
  return (await queueStates(admin)).map(({ name, s, keys }) => ({ name, limits: s.limits, running: s.holders.length, waiting: s.waiters.length, keys: busiestKeys(keys, 50) }));
}

/** The same as engine.queues.list() gives it (domain/queue-summary.ts): the busiest keys
 *  (SUMMARY_KEYS) and, with a queue-wide rate limit, the starts its window counts at `now`
 *  (a pending holder's start counts in every window, as the object counts it). */
export async function queueSummariesAt(admin: AdminApi, now: number): Promise<DomainQueueSummary[]> {
  return (await queueStates(admin)).map(({ name, s, keys }) => {
    const rate = s.limits.rate;
    const started = rate && s.starts.filter((st) => st.at > now - rate.periodMs).length + s.holders.filter((h) => h.pending).length;
    return { name, limits: s.limits, running: s.holders.length, waiting: s.waiters.length, keys: busiestKeys(keys), keyCount: keys.length, ...(rate ? { started } : {}) };
  });
}
