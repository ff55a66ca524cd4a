// Small JSON-over-HTTP helper for the admin API and ingress: bounded by a timeout, never throws
// on a non-2xx status (callers map statuses to domain errors).
export interface HttpResult {
  status: number;
  ok: boolean;
  text: string;
  json: unknown;
}

export async function httpJson(method: string, url: string, body?: unknown, opts: { timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const r = await fetch(url, {
    method,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    // identity: compressing small local JSON answers only costs CPU on both sides.
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), accept: 'application/json', 'accept-encoding': 'identity', ...opts.headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = undefined;
  }
  return { status: r.status, ok: r.ok, text, json };
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
