// Recipe: the engine inside a Fastify 5 app. The engine runs in the app's process on its
// embedded SQLite file and is tied to Fastify's lifecycle: decorated onto the instance, stopped
// in an onClose hook (after the server stops taking requests). The payment provider posts to
// the app's own route /hooks/<workflow>/<secret>, which hands the request to
// engine.handleWebhook (no port of the engine's own: `webhook: { listen: false }`;
// engine.webhookUrl('fulfil', { base }) is the URL with its secret); the app adds a manual
// start route and a run status route.
// Test: test/recipes/fastify.test.ts.
import Fastify, { type FastifyInstance } from 'fastify';
import { getRequestListener } from '@hono/node-server';
import { createEngine, type Engine } from '@tranquil/engine';
import { errorAnswer, fulfilment, runStatus, startFulfilment, type Warehouse } from './fulfil.ts';

declare module 'fastify' {
  interface FastifyInstance {
    engine: Engine;
  }
}

export function createApp(engine: Engine): FastifyInstance {
  const app = Fastify();
  app.decorate('engine', engine);
  app.addHook('onClose', async () => engine.stop());
  // The webhook in its own encapsulated context, where no body parser runs: the engine reads
  // the body itself (its size limit, JSON or form). getRequestListener (@hono/node-server)
  // turns node's request into a fetch Request and writes the Response to the hijacked reply.
  app.register(async (hooks) => {
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const listener = getRequestListener((request) => engine.handleWebhook(request), { overrideGlobalObjects: false });
    hooks.post('/hooks/:workflow/:secret', async (req, reply) => {
      reply.hijack();
      await listener(req.raw, reply.raw);
    });
  });
  app.post('/orders', async (req, reply) => {
    const a = await startFulfilment(engine, req.body);
    return reply.code(a.status).send(a.body);
  });
  app.get<{ Params: { id: string } }>('/runs/:id', async (req, reply) => {
    const a = await runStatus(engine, req.params.id);
    return reply.code(a.status).send(a.body);
  });
  app.setErrorHandler((err, _req, reply) => {
    // Fastify's own errors (bad JSON: 400, unsupported media type: 415) carry their status.
    const status = (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) return reply.code(status).send({ error: (err as Error).message });
    const a = errorAnswer(err);
    return reply.code(a.status).send(a.body);
  });
  return app;
}

/** Starts the engine, then the app (port 0: any free port); `app.close()` stops both. */
export async function start(options: { dataDir: string; warehouse: Warehouse; port?: number; host?: string }): Promise<{ app: FastifyInstance; url: string }> {
  const engine = await createEngine({ dataDir: options.dataDir, workflows: [fulfilment(options.warehouse)], webhook: { listen: false } });
  await engine.start();
  const app = createApp(engine);
  try {
    const url = await app.listen({ port: options.port ?? 3000, host: options.host ?? '127.0.0.1' });
    return { app, url };
  } catch (err) {
    await app.close(); // the onClose hook stops the engine
    throw err;
  }
}
