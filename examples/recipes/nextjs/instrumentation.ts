// Next.js calls register() once when a server instance starts: the engine starts then, not on
// the first request, so runs due after a restart resume before anyone asks. Only in the Node.js runtime (the Edge runtime cannot open SQLite).
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { getEngine } = await import('./lib/engine.ts');
    // engine.webhookUrl('fulfil', { base: 'https://<your app>/api/hooks' }) is the URL (with
    // its secret) to give the payment provider.
    await getEngine();
  }
}
