// The StepApi surface over a backend's three step primitives. Argument checking lives here
// once, so both backends reject the same bad calls with the same messages.
import { parseDuration, type Duration } from '../domain/duration.ts';
import { attrsSchema, capabilityNameSchema, type Attrs } from '../domain/capability.ts';
import { ValidationError } from '../domain/errors.ts';
import type { Json } from '../domain/json.ts';
import type { StepApi, StepBody, StepOptions, UseOptions } from '../../sdk/types.ts';

export interface StepPrimitives {
  do(name: string, options: StepOptions | undefined, body: StepBody<unknown>): Promise<unknown>;
  /** wakeAtFrom(now) gives the absolute wake time. */
  sleep(name: string, wakeAtFrom: (now: number) => number): Promise<void>;
  wait(name: string, timeoutMs: number | undefined): Promise<unknown>;
  /** A capability step (src/runtime/capability-call.ts); absent: step.use is refused. */
  use?(capability: string, input: Json, affinity: Attrs, options: StepOptions): Promise<unknown>;
}

const reject = (message: string) => Promise.reject(new ValidationError(message));
const MAX_DATE_MS = 8.64e15;

/** StepApi without the child-run calls, which src/runtime/child-steps.ts adds on top of it. */
export type BaseStepApi = Omit<StepApi, 'invoke' | 'start' | 'result'>;

export function stepApi(p: StepPrimitives): BaseStepApi {
  return {
    do<T>(name: string, a: StepOptions | StepBody<T>, b?: StepBody<T>): Promise<T> {
      const [options, body] = typeof a === 'function' ? [undefined, a] : [a, b];
      if (typeof body !== 'function') return reject(`step.do('${String(name)}'): missing step function`);
      return p.do(name, options, body) as Promise<T>;
    },
    sleep(name: string, duration: Duration): Promise<void> {
      let ms: number;
      try {
        ms = parseDuration(duration, `step.sleep('${String(name)}') duration`);
      } catch (err) {
        return reject((err as Error).message);
      }
      return p.sleep(name, (now) => now + ms);
    },
    sleepUntil(name: string, at: Date | number): Promise<void> {
      const t = at instanceof Date ? at.getTime() : at;
      // A wake time must be a time a Date can hold (|t| <= 8.64e15 ms), as every view shows it as one.
      if (typeof t !== 'number' || !(Math.abs(t) <= MAX_DATE_MS)) return reject(`step.sleepUntil('${String(name)}'): expected a Date or epoch ms`);
      return p.sleep(name, () => t);
    },
    waitForEvent<T>(name: string, options?: { timeout?: Duration }): Promise<T> {
      let timeoutMs: number | undefined;
      try {
        if (options?.timeout !== undefined) timeoutMs = parseDuration(options.timeout, `step.waitForEvent('${String(name)}') timeout`);
      } catch (err) {
        return reject((err as Error).message);
      }
      return p.wait(name, timeoutMs) as Promise<T>;
    },
    use<T>(capability: string, input?: Json, options?: UseOptions): Promise<T> {
      const what = `step.use('${String(capability)}')`;
      if (!p.use) return reject(`${what}: capability steps are not available here`);
      const name = capabilityNameSchema().safeParse(capability);
      if (!name.success) return reject(`${what}: capability name ${name.error.issues[0]?.message ?? 'is invalid'}`);
      const { affinity, ...stepOptions } = options ?? {};
      const aff = attrsSchema().safeParse(affinity ?? {});
      if (!aff.success) {
        const issue = aff.error.issues[0];
        const at = issue?.path.length ? ` ${issue.path.map(String).join('.')}` : '';
        return reject(`${what}: affinity${at}: ${issue?.message ?? 'is invalid'}`);
      }
      return p.use(capability, input ?? null, aff.data, stepOptions) as Promise<T>;
    },
  };
}
