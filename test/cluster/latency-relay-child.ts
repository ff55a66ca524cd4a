// The latency relay's process (latency-relay.ts says what it does). Routes come as JSON in
// RELAY_ROUTES; prints {"ready":true,"ports":{name:port}} once every route listens; each
// stdin line {"delayMs","jitterMs"} sets the delay for bytes arriving from then on and is
// answered {"ok":true}. Exits when stdin closes (its parent is gone) or on SIGTERM.
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { relayConnection, type Delay, type Route } from './latency-relay.ts';

const routes = JSON.parse(process.env.RELAY_ROUTES!) as Route[];
let delay: Delay = { delayMs: 0, jitterMs: 0 };
const servers: Server[] = [];
const ports: Record<string, number> = {};

for (const r of routes) {
  const server = createServer({ allowHalfOpen: true }, (client) => relayConnection(client, r.target, () => delay));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(r.listen.port ?? 0, r.listen.host, () => resolve());
  });
  ports[r.name] = (server.address() as { port: number }).port;
  servers.push(server);
}
process.stdout.write(`${JSON.stringify({ ready: true, ports })}\n`);

const quit = () => process.exit(0);
process.on('SIGTERM', quit);
for await (const line of createInterface({ input: process.stdin })) {
  const d = JSON.parse(line) as Delay;
  delay = { delayMs: Number(d.delayMs) || 0, jitterMs: Number(d.jitterMs) || 0 };
  process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
}
quit();
