// AdminApi.query rides out a 5xx for a few seconds: a Restate cluster node answers
// 500 "expecting a partition store" while one of its partition stores is still opening or
// moving (seen in the cluster test right after start), and that passes. A 4xx (the query
// itself refused) fails at once. A local HTTP server stands in for the admin API here: a real
// restate-server cannot be made to answer that 500 on demand.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminApi } from '../../src/adapters/restate/admin-api.ts';
import { BackendUnavailableError } from '../../src/domain/errors.ts';

const PARTITION_STORE = JSON.stringify({ message: 'Datafusion error: External error: expecting a partition store' });

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** An admin API whose /query answers the given statuses in turn (then 200 with one row). */
async function adminAnswering(statuses: number[]): Promise<{ url: string; queries: string[] }> {
  const queries: string[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      queries.push((JSON.parse(body) as { query: string }).query);
      const status = statuses[queries.length - 1] ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? JSON.stringify({ rows: [{ n: 7 }] }) : status === 400 ? JSON.stringify({ message: 'Datafusion error: SQL error: ParserError' }) : PARTITION_STORE);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, queries };
}

describe('restate admin queries', () => {
  it('a 500 while a partition store opens is asked again, and the rows come back', async () => {
    const admin = await adminAnswering([500, 500]);
    await expect(new AdminApi(admin.url).query('SELECT count(*) AS n FROM sys_invocation')).resolves.toEqual([{ n: 7 }]);
    expect(admin.queries).toEqual(Array(3).fill('SELECT count(*) AS n FROM sys_invocation'));
  });

  it('a 4xx (the query refused) fails at once, naming the status and the message', async () => {
    const admin = await adminAnswering([400]);
    const err = await new AdminApi(admin.url).query('SELEC x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toBe('restate admin query failed (400): {"message":"Datafusion error: SQL error: ParserError"}');
    expect(admin.queries).toHaveLength(1);
  });

  it('a 500 that lasts past the settle time fails with the server\'s message', async () => {
    const admin = await adminAnswering(Array(100).fill(500));
    const err = await new AdminApi(admin.url, 300).query('SELECT 1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toBe(`restate admin query failed (500): ${PARTITION_STORE}`);
    expect(admin.queries.length).toBeGreaterThan(1);
    expect(admin.queries.length).toBeLessThan(100);
  });
});
