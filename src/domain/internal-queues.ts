// The queues run-level flow control keeps for itself (src/domain/run-flow.ts: a workflow's
// runs.singleton is the queue `~singleton.<workflow>`, its runs.rateLimit `~rate.<workflow>`).
// A user never names them (queue names start with a letter), so `tranquil queues list` leaves
// them out unless asked (`--all`), and then says what each one is.

/** What an internal queue is for. */
export interface InternalQueue {
  option: 'runs.singleton' | 'runs.rateLimit';
  workflow: string;
}

/** What an internal queue is for; undefined for a user's queue. */
export function internalQueue(name: string): InternalQueue | undefined {
  const m = /^~(singleton|rate)\.(.+)$/.exec(name);
  if (!m) return undefined;
  return { option: m[1] === 'singleton' ? 'runs.singleton' : 'runs.rateLimit', workflow: m[2]! };
}

/** One line of `tranquil queues list` (an internal queue labelled as such). */
export function queueLine(q: { name: string; running: number; waiting: number; limits: unknown }): string {
  const internal = internalQueue(q.name);
  const label = internal ? `  (internal: ${internal.option} of workflow '${internal.workflow}')` : '';
  return `${q.name}  running ${q.running}  waiting ${q.waiting}  limits ${JSON.stringify(q.limits)}${label}`;
}

/** The queues `tranquil queues list` shows: a user's queues, or every queue with `all`. */
export function listedQueues<Q extends { name: string }>(rows: readonly Q[], all: boolean): (Q & { internal?: ReturnType<typeof internalQueue> })[] {
  return rows.flatMap((q) => {
    const internal = internalQueue(q.name);
    if (!internal) return [q];
    return all ? [{ ...q, internal }] : [];
  });
}
