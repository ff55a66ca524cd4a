// Serving a Hono app on a node:http server bound to one host and port, as a promise;
// shared by the webhook listener and the serve control endpoint.
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';

export interface Listening {
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function listen(app: Hono, host: string, port: number): Promise<Listening> {
  // overrideGlobalObjects: false keeps the process's own fetch/Request/Response untouched.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  // Outlive clients' idle keep-alive (undici: 4s) so a reused socket is never closed under them.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return {
    host,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
