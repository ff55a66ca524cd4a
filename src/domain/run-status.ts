// The run state machine: the statuses a run reports (the public status list) and the moves
// between them the engine makes. The edge table is a specification the unit tests pin; stores
// write statuses directly and nothing checks a move against it at run time.
// `parked`: a capability step (step.use) waits for a host provider (src/domain/capability.ts).

export const RUN_STATUSES = [
  'pending', 'running', 'sleeping', 'waiting', 'retrying', 'parked', 'blocked',
  'succeeded', 'failed', 'cancelled',
] as const;
/** A run's status. `succeeded`, `failed` and `cancelled` are final (a failed run can be
 *  retried); `parked`: waits for a capability provider; `blocked`: a workflow file waits for
 *  approval of its permissions. */
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

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
