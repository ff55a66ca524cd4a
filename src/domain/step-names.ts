// Step identity inside one run: the k-th call with the same name is `name#k` (k >= 2),
// and the idempotency key is `<runId>/<unique name>`, the same on every attempt and replay.
// `#` is reserved for those automatic names: a name the code passes may not contain it, so
// a step named 'charge#2' can never take the place (and key) of the 2nd 'charge'. This
// covers every kind (do, sleep, waitForEvent, and ctx.emit's `emit:<event>`).
import { ValidationError } from './errors.ts';

export const RESERVED_IN_NAMES = '#';

export class StepNamer {
  /** A dictionary, not a Map: a Map that grows rehashes into a new table linked from the old
   *  one, and a run-long namer in the old generation then keeps its newer tables (and the
   *  names) alive past the run until a full GC (src/runtime/churn-map.ts). */
  private readonly seen: Record<string, number> = Object.create(null) as Record<string, number>;

  next(name: unknown): string {
    if (typeof name !== 'string' || name.length === 0) {
      throw new ValidationError('step name must be a non-empty string');
    }
    if (name.includes(RESERVED_IN_NAMES)) {
      throw new ValidationError(`step name '${name}' contains '#', which is reserved for repeated names (the 2nd step named 'x' is 'x#2')`);
    }
    const count = (this.seen[name] ?? 0) + 1;
    this.seen[name] = count;
    return count === 1 ? name : `${name}#${count}`;
  }
}

export function idempotencyKey(runId: string, uniqueName: string): string {
  return `${runId}/${uniqueName}`;
}
