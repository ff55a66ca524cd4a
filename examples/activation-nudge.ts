// The activation-nudge workflow from the README's Quick start, with fake app and mail actions.
// NUDGE_PAUSE shortens the 48h pause for demos (npm start uses 2s).
import { event, manual, workflow } from '@tranquil/sdk';
import { loadUser, sendMail } from './fake-app.ts';

const pause = process.env.NUDGE_PAUSE ?? '48h';

export default workflow('activation-nudge', (w) => {
  w.trigger(event('user.signed_up'));
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    await step.sleep('pause', pause);
    const user = await step.do('fetch', () => loadUser(input.userId));
    if (user.activated) return { skipped: true };
    await step.do(
      'nudge',
      { retries: { limit: 3, backoff: 'exponential', delay: '1s', jitter: true }, timeout: '10s' },
      async ({ idempotencyKey }) => sendMail(user.email, idempotencyKey),
    );
    await ctx.emit('user.nudged', { userId: input.userId });
    return { nudged: true, at: ctx.now() };
  });
});
