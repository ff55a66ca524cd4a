// Small JSON-over-HTTP helper for the admin API and ingress: bounded by a timeout, never throws
// on a non-2xx status (callers map statuses to domain errors). A request that gets no answer
// in time is a StorageError naming the request (the caller's retry logic treats it like any
// other transport failure); connection failures stay fetch's TypeError.
import { StorageError } from '../../domain/errors.ts';

export interface HttpResult {
  status: number;
  ok: boolean;
  text: string;
  json: unknown;
}

export async function httpJson(method: string, url: string, body?: unknown, opts: { timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let status: number;
  let ok: boolean;
  let text: string;
  try {
    const r = await fetch(url, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      // identity: compressing small local JSON answers only costs CPU on both sides.
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), accept: 'application/json', 'accept-encoding': 'identity', ...opts.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    ({ status, ok } = r);
    text = await r.text();
  } catch (err) {
    if ((err as Error)?.name === 'TimeoutError') throw new StorageError(`restate: ${method} ${new URL(url).pathname.slice(0, 120)} got no answer within ${timeoutMs} ms`);
    throw err;
  }
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = undefined;
  }
  return { status, ok, text, json };
}

export function freePort(): Promise<number> {
  return import('node:net').then(
    ({ createServer }) =>
      new Promise<number>((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => {
          const addr = s.address();
          const port = typeof addr === 'object' && addr ? addr.port : 0;
          s.close(() => resolve(port));
        });
      }),
  );
}

export function portFree(port: number): Promise<boolean> {
  return import('node:net').then(
    ({ createServer }) =>
      new Promise<boolean>((resolve) => {
        const s = createServer();
        s.once('error', () => resolve(false));
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
      }),
  );
}
