// One step attempt bounded by its timeout. Real time on purpose: it bounds work in flight,
// it is not a durable timer. Past the bound the attempt fails with TimeoutError and a late
// result is ignored. Any accepted duration works, longer than 24.8 days too (long-timer.ts).
import { TimeoutError } from '../domain/errors.ts';
import { setLongTimeout } from './long-timer.ts';

export async function withTimeout<T>(body: () => T | Promise<T>, timeoutMs: number, name: string, attempt: number): Promise<T> {
  let cancel: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    cancel = setLongTimeout(() => reject(new TimeoutError(`step '${name}' attempt ${attempt} timed out after ${timeoutMs}ms`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(body), timeout]);
  } finally {
    cancel?.();
  }
}
