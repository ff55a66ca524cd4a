// The run state machine: the statuses a run reports (the public status list) and the moves
// between them the engine makes. The edge table is a specification the unit tests pin; stores
// write statuses directly and nothing checks a move against it at run time.
// `parked`: a capability step (step.use) waits for a host provider (src/domain/capability.ts).

export const RUN_STATUSES = [
  'pending', 'running', 'sleeping', 'waiting', 'retrying', 'parked', 'blocked', 'paused',
  'succeeded', 'failed', 'cancelled',
] as const;
/** A run's status. `succeeded`, `failed` and `cancelled` are final (a failed run can be
 *  retried); `parked`: waits for a capability provider; `blocked`: a workflow file waits for
 *  approval of its permissions. */
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

const EDGES: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running', 'cancelled', 'blocked', 'paused'],
  running: ['running', 'sleeping', 'waiting', 'retrying', 'parked', 'succeeded', 'failed', 'cancelled', 'pending', 'paused'],
  sleeping: ['running', 'cancelled', 'pending', 'paused'],
  waiting: ['running', 'cancelled', 'pending', 'paused'],
  retrying: ['running', 'cancelled', 'pending', 'paused'],
  parked: ['running', 'cancelled', 'pending', 'paused'],
  blocked: ['pending', 'cancelled'],
  // runs.pause takes effect at the next step boundary; runs.resume makes it pending again.
  paused: ['pending', 'cancelled'],
  succeeded: [],
  failed: ['pending'], // runs.retry
  cancelled: ['pending'], // runs.resume of a cancelled run (docs/control.md)
};

export function isTerminal(s: RunStatus): boolean {
  return TERMINAL.has(s);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return EDGES[from].includes(to);
}
