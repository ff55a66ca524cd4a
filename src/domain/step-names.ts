// Step identity inside one run: the k-th call with the same name is `name#k` (k >= 2),
// and the idempotency key is `<runId>/<unique name>`, the same on every attempt and replay.
import { ValidationError } from './errors.ts';

export class StepNamer {
  private readonly seen = new Map<string, number>();

  next(name: unknown): string {
    if (typeof name !== 'string' || name.length === 0) {
      throw new ValidationError('step name must be a non-empty string');
    }
    const count = (this.seen.get(name) ?? 0) + 1;
    this.seen.set(name, count);
    return count === 1 ? name : `${name}#${count}`;
  }
}

export function idempotencyKey(runId: string, uniqueName: string): string {
  return `${runId}/${uniqueName}`;
}
