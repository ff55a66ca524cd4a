// One step attempt bounded by its timeout. Real time on purpose: it bounds work in flight,
// it is not a durable timer. Past the bound the attempt fails with TimeoutError and a late
// result is ignored.
import { TimeoutError } from '../domain/errors.ts';

export async function withTimeout<T>(body: () => T | Promise<T>, timeoutMs: number | undefined, name: string, attempt: number): Promise<T> {
  if (timeoutMs === undefined) return await body();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`step '${name}' attempt ${attempt} timed out after ${timeoutMs}ms`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(body), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
