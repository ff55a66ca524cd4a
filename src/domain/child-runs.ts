// Child runs (docs/children.md): a workflow starting another workflow's run and awaiting its
// end. Pure rules every backend and the engine share (the child's run id is child-id.ts's):
// the internal signal a child's end is delivered to its parent by, what that signal
// carries, and the limits (cycle, depth).
import { ValidationError, type ErrorInfo } from './errors.ts';
import type { Json } from './json.ts';
import type { RunStatus } from './run-status.ts';

/** Children of children of ...: deeper than this is refused (runaway recursion). */
export const MAX_CHILD_DEPTH = 32;

/** What happens to a child when its parent is cancelled: `cancel` (default) cancels it (its
 *  cleanup runs), `abandon` leaves it running (Temporal's parent close policy ABANDON). */
export type ParentCancelPolicy = 'cancel' | 'abandon';
export const PARENT_CANCEL_POLICIES = ['cancel', 'abandon'] as const;

/** A run's link to the run that started it, stored with the child. `depth`: 1 for a child of
 *  a top-level run. */
export interface ParentLink {
  runId: string;
  step: string;
  depth: number;
  onParentCancel: ParentCancelPolicy;
}

/** A parent's view of one child. */
export interface ChildSummary {
  runId: string;
  workflow: string;
  step: string;
  status: RunStatus;
}

const SIGNAL_PREFIX = 'child:';

/** The signal a child's end reaches its parent as; also the name of the parent's wait step. */
export const childSignal = (childRunId: string): string => `${SIGNAL_PREFIX}${childRunId}`;

/** The child a wait step of this name awaits, if it is a child's wait. */
export function childOfSignal(name: string): string | undefined {
  const base = name.replace(/#\d+$/, '');
  return base.startsWith(SIGNAL_PREFIX) ? base.slice(SIGNAL_PREFIX.length) : undefined;
}

/** What the end signal carries (and the parent's wait step records). */
export type ChildEnd = { '~child': string; workflow?: string } & (
  | { status: 'succeeded'; output?: Json }
  | { status: 'failed'; error: ErrorInfo }
  | { status: 'cancelled' }
);

export function childEnd(runId: string, status: 'succeeded' | 'failed' | 'cancelled', o: { workflow?: string; output?: Json; error?: ErrorInfo } = {}): ChildEnd {
  const head = o.workflow === undefined ? { '~child': runId } : { '~child': runId, workflow: o.workflow };
  if (status === 'succeeded') return o.output === undefined ? { ...head, status } : { ...head, status, output: o.output };
  if (status === 'failed') return { ...head, status, error: o.error ?? { name: 'Error', message: `run ${runId} failed` } };
  return { ...head, status };
}

export function isChildEnd(v: unknown): v is ChildEnd {
  return typeof v === 'object' && v !== null && typeof (v as { '~child'?: unknown })['~child'] === 'string' && typeof (v as { status?: unknown }).status === 'string';
}

/** The refusal of a start whose run id is the starting run's own or one of its ancestors'. */
export function cycleMessage(childId: string, chain: readonly string[]): string {
  return `child run '${childId}' would be its own ancestor (call chain ${[...chain].reverse().join(' -> ')} -> ${childId}): a workflow cannot invoke a run it is part of`;
}

/** A child start checked against its parent's chain (the parent and its ancestors, nearest
 *  first, as far as MAX_CHILD_DEPTH + 1 runs): refuses a cycle or a depth past the limit with
 *  the messages above, else gives the child's depth. */
export function childDepth(childId: string, chain: readonly string[], parentDepth: number): number {
  if (chain.includes(childId)) throw new ValidationError(cycleMessage(childId, chain));
  const depth = parentDepth + 1;
  if (depth > MAX_CHILD_DEPTH) throw new ValidationError(depthMessage(childId, depth));
  return depth;
}

export function depthMessage(childId: string, depth: number): string {
  return `child run '${childId}' would be at depth ${depth}, past the limit of ${MAX_CHILD_DEPTH} nested child runs (runaway recursion?)`;
}
