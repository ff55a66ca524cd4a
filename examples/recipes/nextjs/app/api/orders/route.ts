// POST /api/orders { orderId, amount }: starts the fulfilment of an order by hand (the
// payment provider's webhook is app/api/hooks/[workflow]/[secret]/route.ts).
import { errorAnswer, startFulfilment } from '../../../../fulfil.ts';
import { getEngine } from '../../../lib/engine.ts';

// better-sqlite3 is a native module: the Node.js runtime, never the Edge runtime.
export const runtime = 'nodejs';

export async function POST(request: Request): Promise<Response> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return Response.json({ error: 'body is not valid JSON' }, { status: 400 });
  }
  try {
    const a = await startFulfilment(await getEngine(), body);
    return Response.json(a.body, { status: a.status });
  } catch (err) {
    const a = errorAnswer(err);
    return Response.json(a.body, { status: a.status });
  }
}
