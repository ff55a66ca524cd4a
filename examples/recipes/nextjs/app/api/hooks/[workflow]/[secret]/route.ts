// POST /api/hooks/<workflow>/<secret>: the payment provider's webhook, served by the engine
// itself (engine.handleWebhook: the secret, the body limit, the input schema, Idempotency-Key
// dedup; 202 { runId, created }). The URL to give the provider, with its secret, is
// engine.webhookUrl('fulfil', { base: 'https://<your app>/api/hooks' }).
import { getEngine } from '../../../../../lib/engine.ts';

// better-sqlite3 is a native module: the Node.js runtime, never the Edge runtime.
export const runtime = 'nodejs';

export async function POST(request: Request): Promise<Response> {
  return (await getEngine()).handleWebhook(request);
}
