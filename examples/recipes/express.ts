// Recipe: the engine inside an Express 5 app. The engine runs in the app's process on its
// embedded SQLite file; the payment provider posts to the app's own route
// /hooks/<workflow>/<secret>, which hands the request to engine.handleWebhook (the engine opens
// no port of its own: `webhook: { listen: false }`; the URL with its secret is
// engine.webhookUrl('fulfil', { base: 'https://<your app>/hooks' })); the app adds a manual
// start route and a run status route. Shutdown closes the HTTP server
// first, then stops the engine (a step in flight is replayed by the next start with the same
// idempotency key). Test: test/recipes/express.test.ts.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { getRequestListener } from '@hono/node-server';
import { createEngine, type Engine } from '@tranquil/engine';
import { errorAnswer, fulfilment, runStatus, startFulfilment, type Warehouse } from './fulfil.ts';

export function createApp(engine: Engine): express.Express {
  const app = express();
  // The webhook first, before any body parser: the engine reads the body itself (its size
  // limit, JSON or form). getRequestListener (@hono/node-server) turns node's request into a
  // fetch Request and writes the Response back; overrideGlobalObjects: false leaves the
  // process's own Request/Response alone.
  const hooks = getRequestListener((request) => engine.handleWebhook(request), { overrideGlobalObjects: false });
  app.post('/hooks/:workflow/:secret', (req, res) => hooks(req, res));
  app.use(express.json());
  // Express 5 passes a rejected promise from a handler to the error handler below.
  app.post('/orders', async (req, res) => {
    const a = await startFulfilment(engine, req.body);
    res.status(a.status).json(a.body);
  });
  app.get('/runs/:id', async (req, res) => {
    const a = await runStatus(engine, req.params.id);
    res.status(a.status).json(a.body);
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    // body-parser's own errors (bad JSON: 400, too large: 413) carry their status.
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return void res.status(status).json({ error: (err as Error).message });
    const a = errorAnswer(err);
    res.status(a.status).json(a.body);
  });
  return app;
}

export interface Hosted {
  engine: Engine;
  /** The app's base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  close(): Promise<void>;
}

/** Starts the engine, then the app (port 0: any free port). */
export async function start(options: { dataDir: string; warehouse: Warehouse; port?: number; host?: string }): Promise<Hosted> {
  const engine = await createEngine({ dataDir: options.dataDir, workflows: [fulfilment(options.warehouse)], webhook: { listen: false } });
  await engine.start();
  const server = createApp(engine).listen(options.port ?? 3000, options.host ?? '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (err) {
    await engine.stop();
    throw err;
  }
  const { address, port } = server.address() as AddressInfo;
  return {
    engine,
    url: `http://${address}:${port}`,
    close: async () => {
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      await engine.stop();
    },
  };
}
