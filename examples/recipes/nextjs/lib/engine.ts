// One engine per Next.js server process, created on first use and kept on globalThis: `next
// dev` re-evaluates modules on every edit, and the instrumentation hook and the route handlers
// may be bundled apart, so a plain module-level variable could build a second engine on the
// same data dir (which the owner lease refuses). Same pattern as Prisma's guide for its client
// in Next.js (https://www.prisma.io/docs/support/help-articles/nextjs-prisma-client-dev-practices),
// kept in production too. A failed start is not cached: the next request tries again.
import { createEngine, type Engine } from '@tranquil/engine';
import { fulfilment } from '../../fulfil.ts';
import { warehouse } from './warehouse.ts';

const holder = globalThis as typeof globalThis & { tranquilEngine?: Promise<Engine> };

async function boot(): Promise<Engine> {
  // The webhook is a route of the app (app/api/hooks/...): the engine opens no port of its own.
  const engine = await createEngine({ dataDir: process.env.TRANQUIL_DATA_DIR ?? '.tranquil', workflows: [fulfilment(warehouse)], webhook: { listen: false } });
  await engine.start();
  return engine;
}

export function getEngine(): Promise<Engine> {
  holder.tranquilEngine ??= boot().catch((err: unknown) => {
    holder.tranquilEngine = undefined;
    throw err;
  });
  return holder.tranquilEngine;
}

/** Stops the engine (SIGTERM in a custom server, or a test's teardown); the next getEngine()
 *  starts a fresh one. */
export async function stopEngine(): Promise<void> {
  const running = holder.tranquilEngine;
  holder.tranquilEngine = undefined;
  if (running) await (await running).stop();
}
