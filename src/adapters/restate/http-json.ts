// Small JSON-over-HTTP helper for the admin API and ingress: bounded by a timeout, never throws
// on a non-2xx status (callers map statuses to domain errors). A request that gets no answer
// in time, and a connection that fails (refused, reset), is a BackendUnavailableError naming
// the request: transient, and the one class the callers' retry logic keys on.
import { BackendUnavailableError } from '../../domain/errors.ts';

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
    const where = `${method} ${new URL(url).pathname.slice(0, 120)}`;
    if ((err as Error)?.name === 'TimeoutError') throw new BackendUnavailableError(`restate: ${where} got no answer within ${timeoutMs} ms`);
    const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
    throw new BackendUnavailableError(`restate: ${where} at ${new URL(url).host} failed: ${cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err)}`);
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
