// Webhook deliveries over HTTP: POST .../<workflow>/<secret>, served either by the engine's
// own listener (hono on node:http, path /hooks/<workflow>/<secret>) or, through
// createWebhookFetch, inside the host app's router (engine.handleWebhook: the path's last two
// segments). Both are the same hono app, so they answer alike. Order of checks, each answered
// before any run exists:
//   unknown workflow or wrong secret -> 404 (constant-time compare, same answer for both)
//   body over the limit              -> 413 (Content-Length or streamed count)
//   unreadable body / media type     -> 400 / 415
//   validate rejects                 -> 400 with the reason
//   otherwise                        -> 202 { runId, created }
// An Idempotency-Key header makes a redelivery return the first run (created: false).
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Context } from 'hono';
import type { Json } from '../../domain/json.ts';
import type { RunningListener, WebhookFetch, WebhookFetchOptions, WebhookHandler, WebhookListenOptions } from '../../ports/webhook-listener.ts';
import { listen } from './listen.ts';
import { secretsEqual } from './secret-compare.ts';

// The body of a refused request is never read: close the connection rather than reuse it.
const notFound = (c: Context) => c.json({ error: 'not found' }, 404, { connection: 'close' });
/** Compared against when the workflow is unknown, so both 404s cost the same. */
const DUMMY_SECRET = 'x'.repeat(43);

type Parsed = { ok: true; body: Json } | { ok: false; status: 400 | 415; reason: string };

async function readBody(c: Context): Promise<Parsed> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = await c.req.text();
    if (text.trim() === '') return { ok: true, body: null };
    try {
      return { ok: true, body: JSON.parse(text) as Json };
    } catch (err) {
      return { ok: false, status: 400, reason: `body is not valid JSON: ${(err as Error).message}` };
    }
  }
  if (type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data') {
    let form: Awaited<ReturnType<typeof c.req.parseBody>>;
    try {
      form = await c.req.parseBody({ all: true });
    } catch (err) {
      return { ok: false, status: 400, reason: `body is not a valid form: ${(err as Error).message}` }; // was a 500
    }
    const body: Record<string, Json> = {};
    for (const [k, v] of Object.entries(form)) {
      const values = Array.isArray(v) ? v : [v];
      if (values.some((x) => typeof x !== 'string')) return { ok: false, status: 400, reason: `form field '${k}': file uploads are not accepted` };
      body[k] = values.length === 1 ? (values[0] as string) : (values as string[]);
    }
    return { ok: true, body };
  }
  if (type === '') {
    const text = await c.req.text();
    if (text === '') return { ok: true, body: null };
  }
  return { ok: false, status: 415, reason: `unsupported content-type '${type || 'none'}': send application/json or a form` };
}

/** Reads and discards up to `max` bytes of an oversized body, so a client still uploading
 *  receives the 413 instead of a reset connection; beyond `max` the socket is dropped. */
async function drain(body: ReadableStream<Uint8Array> | null, max: number): Promise<void> {
  if (!body || body.locked) return;
  const reader = body.getReader();
  try {
    for (let seen = 0; seen <= max; ) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing to answer.
  }
}

/** Which workflow segment and secret a request names: the listener's route params, or the
 *  last two segments of a path the host app routed here (its mount point is its own). */
type Locate = (c: Context) => { target: string; secret: string } | undefined;

const byParams: Locate = (c) => ({ target: c.req.param('target')!, secret: c.req.param('secret')! });
const byTail: Locate = (c) => {
  const parts = c.req.path.split('/').filter((p) => p !== '');
  return parts.length < 2 ? undefined : { target: parts[parts.length - 2]!, secret: parts[parts.length - 1]! };
};

function webhookApp(o: WebhookFetchOptions, h: WebhookHandler, route: string, locate: Locate): Hono {
  const app = new Hono();
  app.post(
    route,
    async (c, next) => {
      const at = locate(c);
      const target = at && h.resolve(at.target);
      const expected = target ? await h.secretFor(target.workflow) : DUMMY_SECRET;
      const ok = secretsEqual(at?.secret ?? '', expected);
      if (!target || !ok) return notFound(c);
      await next();
    },
    bodyLimit({
      maxSize: o.bodyLimitBytes,
      onError: async (c) => {
        await drain(c.req.raw.body, o.bodyLimitBytes * 4);
        c.header('connection', 'close');
        return c.json({ error: `body larger than ${o.bodyLimitBytes} bytes` }, 413);
      },
    }),
    async (c) => {
      const target = h.resolve(locate(c)!.target)!;
      const key = c.req.header('idempotency-key');
      if (key !== undefined && (key.length === 0 || key.length > 200)) {
        return c.json({ error: 'Idempotency-Key header: must be 1-200 characters' }, 400);
      }
      const parsed = await readBody(c);
      if (!parsed.ok) return c.json({ error: parsed.reason }, parsed.status);
      const checked = await target.validate(parsed.body);
      if (!checked.ok) return c.json({ error: checked.reason }, 400);
      // A W3C traceparent header makes the run part of the sender's trace (invalid: ignored).
      const traceparent = c.req.header('traceparent');
      const started = await h.startRun(target.workflow, checked.body, key, traceparent !== undefined && traceparent.length <= 256 ? traceparent : undefined);
      return c.json(started, 202);
    },
  );
  app.notFound(notFound);
  app.onError((err, c) => {
    // Never a stack trace over HTTP; the operator sees it in the engine's log.
    console.error(`tranquil: webhook request failed: ${err.message}`);
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}

/** The engine's own listener: POST /hooks/<workflow>/<secret> on its host and port. */
export async function startWebhookListener(o: WebhookListenOptions, h: WebhookHandler): Promise<RunningListener> {
  return listen(webhookApp(o, h, '/hooks/:target/:secret', byParams), o.host, o.port);
}

/** The same answers as a fetch handler for the host app's router (engine.handleWebhook). */
export async function createWebhookFetch(o: WebhookFetchOptions, h: WebhookHandler): Promise<WebhookFetch> {
  const app = webhookApp(o, h, '*', byTail);
  return async (request) => app.fetch(request);
}
