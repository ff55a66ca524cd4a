// A pending debounce burst as the CLI shows it (docs/flow-control.md, Debounce): `tranquil
// runs list --debounced` lists them, `why` and `runs describe` of a burst's run id say when
// it starts. Pure: the backends read the bursts, this words them.
import { formatDuration } from './duration.ts';
import { isoTime } from './iso-time.ts';

/** A burst collecting triggers, before its run starts. */
export interface PendingBurst {
  workflow: string;
  /** '' for a workflow without a key function. */
  key: string;
  /** The run the burst becomes. */
  runId: string;
  /** Triggers collected so far. */
  count: number;
  /** The burst's first trigger (epoch ms). */
  firstAt: number;
  /** When its run starts unless another trigger joins (epoch ms). */
  dueAt: number;
}

/** What --json prints: the times as ISO. */
export interface BurstView {
  runId: string;
  workflow: string;
  key: string;
  count: number;
  firstAt: string;
  startsAt: string;
}

export function burstView(b: PendingBurst): BurstView {
  return { runId: b.runId, workflow: b.workflow, key: b.key, count: b.count, firstAt: isoTime(b.firstAt), startsAt: isoTime(b.dueAt) };
}

const startsAt = (b: PendingBurst, now: number): string => `${isoTime(b.dueAt)} (${b.dueAt > now ? `in ${formatDuration(b.dueAt - now)}` : 'due now'})`;
const triggers = (n: number): string => `${n} trigger${n === 1 ? '' : 's'}`;
const keyText = (key: string): string => (key === '' ? '' : ` for key '${key}'`);

/** One line of `runs list --debounced`. */
export function burstLine(b: PendingBurst, now: number): string {
  return `${b.runId}  ${b.workflow}  debouncing${keyText(b.key)}  ${triggers(b.count)}  starts ${startsAt(b, now)}`;
}

/** `why` of a burst's run id: the run does not exist yet. */
export function explainBurst(b: PendingBurst, now: number): { runId: string; burst: BurstView; summary: string; next: string } {
  return {
    runId: b.runId,
    burst: burstView(b),
    summary: `Run ${b.runId} has not started: it is the run of a debounce burst of '${b.workflow}'${keyText(b.key)}, ${triggers(b.count)} collected since ${isoTime(b.firstAt)}; it starts at ${startsAt(b, now)} with the last trigger's input, unless another trigger joins and moves that later.`,
    next: 'wait for it to start (tranquil runs list --debounced lists every burst collecting now)',
  };
}
