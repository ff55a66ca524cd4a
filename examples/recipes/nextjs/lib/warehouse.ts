// The app's warehouse client (an HTTP API at WAREHOUSE_URL). Each call carries the step's
// idempotency key, the same on every attempt, so a retried step is one invoice, one shipment.
// A 4xx answer is final (TerminalError: retrying cannot help); anything else is retried by
// the step's retry policy.
import * as z from 'zod';
import { TerminalError } from '@tranquil/sdk';
import type { Warehouse } from '../../fulfil.ts';

const Created = z.object({ id: z.string().min(1) });

async function post(path: string, body: unknown, key: string): Promise<string> {
  const base = process.env.WAREHOUSE_URL;
  if (!base) throw new TerminalError('WAREHOUSE_URL is not set');
  const res = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  if (res.status >= 400 && res.status < 500) throw new TerminalError(`warehouse ${path}: HTTP ${res.status} ${await res.text()}`);
  if (!res.ok) throw new Error(`warehouse ${path}: HTTP ${res.status}`);
  return Created.parse(await res.json()).id;
}

export const warehouse: Warehouse = {
  invoice: (orderId, amount, key) => post('/invoices', { orderId, amount }, key),
  ship: (orderId, key) => post('/shipments', { orderId }, key),
};
