// The Runs list's queue rows (issue 39; docs/flow-control.md, "Watching queues"): each
// flow-control queue's running against its limit, its depth (waiting), its rate window and
// its busiest keys, from engine.queues.list() (the internal queues of runs.singleton and
// runs.rateLimit left out, as `tranquil queues list` does). Part of the list's live part, so
// it moves with the step events that move it. Queue and key names are user data: escaped.
import { formatDuration } from '../../domain/duration.ts';
import type { Limits } from '../../domain/rate-limit.ts';
import type { QueueSummary } from '../../domain/queue-summary.ts';
import { esc } from './panel-html.ts';

const of = (n: number, limit: number | undefined) => (limit === undefined ? `${n}` : `${n} of ${limit}`);
const rate = (l: Limits | undefined) => (l?.rate ? `${l.rate.limit} per ${formatDuration(l.rate.periodMs)}` : '');

function rateCell(q: QueueSummary): string {
  const bits: string[] = [];
  if (q.limits.rate) bits.push(`<span class="q-started">${q.started ?? 0}</span> of ${esc(rate(q.limits))}`);
  if (q.limits.key?.rate) bits.push(`${esc(rate(q.limits.key))} per key`);
  return bits.join('<br>') || '<span class="muted">no limit</span>';
}

function keysCell(q: QueueSummary): string {
  // A queue with no per-key limit and only its default key has nothing to say per key.
  if (!q.limits.key && q.keys.every((k) => k.key === '')) return '';
  const limit = q.limits.key?.concurrency;
  const rows = q.keys.map((k) => `<li data-key="${esc(k.key)}">${k.key === '' ? '<span class="muted">(no key)</span>' : esc(k.key)}: ` +
    `<span class="k-running">${of(k.running, limit)}</span> running, <span class="k-waiting">${k.waiting}</span> waiting</li>`);
  const more = q.keyCount - q.keys.length;
  return `<ul class="keys">${rows.join('')}</ul>${more > 0 ? `<span class="muted">+${more} more key${more === 1 ? '' : 's'}</span>` : ''}`;
}

/** The queue rows; empty when the engine has no queue to show (none declared, or on Restate
 *  none holding or waiting anything now). */
export function queuesBlock(queues: readonly QueueSummary[]): string {
  if (queues.length === 0) return '';
  const rows = queues.map((q) => {
    const full = q.limits.concurrency !== undefined && q.running >= q.limits.concurrency;
    return `<tr data-queue="${esc(q.name)}"><td>${esc(q.name)}</td><td class="q-running${full ? ' full' : ''}">${of(q.running, q.limits.concurrency)}</td>` +
      `<td class="q-waiting">${q.waiting}</td><td>${rateCell(q)}</td><td>${keysCell(q)}</td></tr>`;
  });
  return `<section id="queues"><h3>Queues</h3><table id="queue-rows"><thead><tr><th>queue</th><th>running</th><th>waiting</th><th>rate (starts in window)</th><th>busiest keys</th></tr></thead>
<tbody>${rows.join('')}</tbody></table></section>`;
}
