// The Cloudflare Workflows example of docs/migrate-cloudflare.md, ported: the same steps,
// sleep and event wait, as a Tranquil workflow. Test: test/recipes/migrate-cloudflare.test.ts.
import { event, workflow } from '@tranquil/sdk';

export interface Mailer {
  loadUser(id: string): Promise<{ email: string; activated: boolean }>;
  send(to: string, key: string): Promise<void>;
}

export function nudge(app: Mailer) {
  return workflow<{ userId: string }>('nudge', (w) => {
    w.trigger(event('user.signed_up'));                               // env.NUDGE.create(...) -> engine.emit / engine.trigger
    w.run(async ({ input, step }) => {                               // event.payload -> input
      const user = await step.do('fetch', () => app.loadUser(input.userId));
      if (user.activated) return { skipped: true };
      await step.sleep('pause', '2d');                               // '2 days' -> '2d'
      await step.do('nudge', { retries: { limit: 3, delay: '30s', backoff: 'exponential' }, timeout: '10m' },
        ({ idempotencyKey }) => app.send(user.email, idempotencyKey)); // the key Cloudflare does not give you
      const reply = await step.waitForEvent<{ text: string }>('reply', { timeout: '7d' }); // instance.sendEvent -> engine.signal
      return { nudged: true, reply: reply.text };
    });
  });
}
