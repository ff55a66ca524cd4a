// The Inngest example of docs/migrate-inngest.md, ported: step.run -> step.do, the event wait
// answered by a signal to the run (Inngest matches the awaited event to the run by a field),
// a timeout that is an exception rather than null, step.sendEvent -> ctx.emit.
// Test: test/recipes/migrate-inngest.test.ts.
import { event, TimeoutError, workflow } from '@tranquil/sdk';

export interface App {
  loadUser(id: string): Promise<{ email: string; activated: boolean }>;
  send(to: string, key: string): Promise<void>;
}

/** The run id of a user's nudge: what the app signals when the user replies. */
export const nudgeRunId = (userId: string) => `nudge-${userId}`;

export function nudge(app: App) {
  return workflow<{ userId: string }>('activation-nudge', (w) => {
    w.trigger(event('user.signed_up'));
    w.defaults({ retries: { limit: 3 } });
    w.run(async ({ input, step, ctx }) => {
      const user = await step.do('fetch', () => app.loadUser(input.userId));
      if (user.activated) return { skipped: true };
      await step.sleep('pause', '2d');
      await step.do('nudge', ({ idempotencyKey }) => app.send(user.email, idempotencyKey));
      let reply: { text: string } | null = null;
      try {
        reply = await step.waitForEvent<{ text: string }>('reply', { timeout: '7d' });
      } catch (err) {
        if (!(err instanceof TimeoutError)) throw err;
      }
      await ctx.emit('user.nudged', { userId: input.userId, replied: reply !== null });
      return { nudged: true, reply: reply?.text ?? null };
    });
  });
}
