// The run state machine. A run moves only along these edges; stores call
// assertTransition() so an illegal move is a bug that surfaces, not silent state.
import { RunStateError } from './errors.ts';

export const RUN_STATUSES = [
  'pending', 'running', 'sleeping', 'waiting', 'retrying', 'parked', 'blocked',
  'succeeded', 'failed', 'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);
/** States where the run holds no executor and waits for time, a signal or a host. */
export const SUSPENDED: ReadonlySet<RunStatus> = new Set(['sleeping', 'waiting', 'retrying', 'parked', 'blocked']);

const EDGES: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running', 'cancelled', 'blocked'],
  running: ['running', 'sleeping', 'waiting', 'retrying', 'parked', 'succeeded', 'failed', 'cancelled', 'pending'],
  sleeping: ['running', 'cancelled', 'pending'],
  waiting: ['running', 'cancelled', 'pending'],
  retrying: ['running', 'cancelled', 'pending'],
  parked: ['running', 'cancelled', 'pending'],
  blocked: ['pending', 'cancelled'],
  succeeded: [],
  failed: ['pending'], // runs.retry
  cancelled: [],
};

export function isTerminal(s: RunStatus): boolean {
  return TERMINAL.has(s);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return EDGES[from].includes(to);
}

export function assertTransition(runId: string, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) throw new RunStateError(`run ${runId} cannot go from ${from} to ${to}`);
}
