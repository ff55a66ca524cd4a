// The serve control endpoint (docs/host.md, "Talking to the service"): how the CLI and an
// embedding app's attach() reach the engine a running `tranquil serve` owns.
// It binds POST /control on 127.0.0.1 (any free port) and writes <dataDir>/serve.json
// (mode 0600: pid, host, port, token). A client presents `Authorization: Bearer <token>`;
// the token (32 random bytes) is compared in constant time. Only someone who can read the
// data dir's serve.json can command the engine: the same people who could open its SQLite
// file anyway. Every request is one zod-validated frame (control-protocol.ts); a bad one is
// answered 400 with a one-line error and nothing is done.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hono } from 'hono';
import { toErrorInfo } from '../../domain/errors.ts';
import { describeIssue } from '../../domain/validate.ts';
import type { Engine } from '../../runtime/engine.ts';
import { listen, type Listening } from './listen.ts';
import { secretsEqual } from './secret-compare.ts';
import { RemoteProviders } from './remote-providers.ts';
import { RemoteSubscriptions } from './remote-subscriptions.ts';
import { applyOp, MAX_FRAME_BYTES, opSchema, SERVE_FILE, serveFileSchema, type ServeInfo } from './control-protocol.ts';

const STATUS: Record<string, 400 | 404 | 409 | 500 | 504> = {
  ValidationError: 400, UnknownWorkflowError: 404, UnknownRunError: 404, RunStateError: 409, TimeoutError: 504,
};

const refuse = (name: string, message: string) => ({ error: { name, message } });

export interface ControlEndpoint {
  info: ServeInfo;
  stop(): Promise<void>;
}

export interface ControlOptions {
  /** How long an attached app's providers outlive its last poll (remote-providers.ts). */
  providerLeaseMs?: number;
  /** How long an attached app's step-event subscriptions outlive its last poll (remote-subscriptions.ts). */
  subscriptionLeaseMs?: number;
}

export async function startControl(engine: Engine, dataDir: string, options: ControlOptions = {}): Promise<ControlEndpoint> {
  const token = randomBytes(32).toString('base64url');
  const ctx = { dataDir, providers: new RemoteProviders(engine.capabilities, options.providerLeaseMs), subscriptions: new RemoteSubscriptions(engine.runs, options.subscriptionLeaseMs) };
  const app = new Hono();
  app.post('/control', async (c) => {
    const auth = c.req.header('authorization') ?? '';
    if (!secretsEqual(auth, `Bearer ${token}`)) return c.json(refuse('Unauthorized', 'bad control token'), 401);
    const length = Number(c.req.header('content-length') ?? '0');
    if (!(length <= MAX_FRAME_BYTES)) return c.json(refuse('ValidationError', `request: larger than ${MAX_FRAME_BYTES} bytes`), 413);
    const body = await c.req.text();
    if (body.length > MAX_FRAME_BYTES) return c.json(refuse('ValidationError', `request: larger than ${MAX_FRAME_BYTES} bytes`), 413);
    let frame: unknown;
    try {
      frame = JSON.parse(body);
    } catch {
      return c.json(refuse('ValidationError', 'request: not valid JSON'), 400);
    }
    const parsed = opSchema().safeParse(frame);
    if (!parsed.success) return c.json(refuse('ValidationError', describeIssue(parsed.error.issues, 'request')), 400);
    try {
      return c.json({ result: (await applyOp(engine, parsed.data, ctx)) ?? null });
    } catch (err) {
      const info = toErrorInfo(err);
      return c.json({ error: info }, STATUS[info.name] ?? 500);
    }
  });
  const l: Listening = await listen(app, '127.0.0.1', 0);
  const info: ServeInfo = { pid: process.pid, host: '127.0.0.1', port: l.port, token };
  const file = join(dataDir, SERVE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  // Created 0600 and renamed into place: never readable by others, never seen half-written.
  writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
  renameSync(tmp, file);
  return {
    info,
    async stop() {
      ctx.providers.close();
      ctx.subscriptions.close();
      await l.close();
      // Only our own file: a later serve may have replaced it.
      if (ownPid(file) === process.pid) rmSync(file, { force: true });
    },
  };
}

function ownPid(file: string): number | undefined {
  try {
    return serveFileSchema().parse(JSON.parse(readFileSync(file, 'utf8'))).pid;
  } catch {
    return undefined;
  }
}
