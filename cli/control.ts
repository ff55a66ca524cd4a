// The serve control endpoint: how CLI commands reach a running `tranquil serve`.
// serve binds POST /control on 127.0.0.1 (any free port) and writes <dataDir>/serve.json
// (mode 0600: pid, port, token). A client presents `Authorization: Bearer <token>`; the
// token is compared in constant time. Only someone who can read the data dir can command
// the engine, the same people who could open the SQLite file anyway.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hono } from 'hono';
import { z } from 'zod';
import { BackendUnavailableError, fromErrorInfo, toErrorInfo } from '../src/domain/errors.ts';
import { describeIssue } from '../src/domain/validate.ts';
import { listen, type Listening } from '../src/adapters/http/listen.ts';
import { secretsEqual } from '../src/adapters/http/secret-compare.ts';
import type { Engine } from '../src/runtime/engine.ts';
import { applyOp, opSchema, type Op } from './ops.ts';
import { pidAlive } from '../src/platform/pid.ts';

export const SERVE_FILE = 'serve.json';

const serveFileSchema = z.object({ pid: z.number().int(), host: z.string(), port: z.number().int(), token: z.string().min(32) });
export type ServeInfo = z.infer<typeof serveFileSchema>;

const STATUS: Record<string, 400 | 404 | 409 | 500> = {
  ValidationError: 400, UnknownWorkflowError: 404, UnknownRunError: 404, RunStateError: 409,
};

export async function startControl(engine: Engine, dataDir: string): Promise<{ info: ServeInfo; stop(): Promise<void> }> {
  const token = randomBytes(32).toString('base64url');
  const app = new Hono();
  app.post('/control', async (c) => {
    const auth = c.req.header('authorization') ?? '';
    if (!secretsEqual(auth, `Bearer ${token}`)) return c.json({ error: { name: 'Unauthorized', message: 'bad control token' } }, 401);
    const parsed = opSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: { name: 'ValidationError', message: describeIssue(parsed.error.issues, 'request') } }, 400);
    try {
      return c.json({ result: await applyOp(engine, parsed.data) });
    } catch (err) {
      const info = toErrorInfo(err);
      return c.json({ error: info }, STATUS[info.name] ?? 500);
    }
  });
  const l: Listening = await listen(app, '127.0.0.1', 0);
  const info: ServeInfo = { pid: process.pid, host: '127.0.0.1', port: l.port, token };
  const file = join(dataDir, SERVE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
  renameSync(tmp, file);
  return {
    info,
    async stop() {
      await l.close();
      // Only our own file: a later serve may have replaced it.
      if (readServeFile(dataDir)?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}

export function readServeFile(dataDir: string): ServeInfo | undefined {
  const file = join(dataDir, SERVE_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return serveFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}


/** The running serve for this data dir, if any (a file left by a dead serve is ignored). */
export function findServe(dataDir: string): ServeInfo | undefined {
  const info = readServeFile(dataDir);
  return info && pidAlive(info.pid) ? info : undefined;
}

export async function sendOp(info: ServeInfo, op: Op): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`http://${info.host}:${info.port}/control`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token}` },
      body: JSON.stringify(op),
    });
  } catch (err) {
    throw new BackendUnavailableError(`serve (pid ${info.pid}) owns the data dir but its control endpoint did not answer: ${(err as Error).message}`);
  }
  const body = (await res.json()) as { result?: unknown; error?: { name: string; message: string } };
  // The serve's error comes back as its own class (fromErrorInfo), as if thrown here.
  if (body.error) throw fromErrorInfo(body.error);
  return body.result;
}
