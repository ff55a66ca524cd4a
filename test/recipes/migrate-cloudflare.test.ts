// The ported Cloudflare Workflows example (examples/migration/cloudflare-nudge.ts) behaves as
// docs/migrate-cloudflare.md says: an event starts one run per dedup id (Cloudflare's instance
// id), the 2-day sleep and the send with its idempotency key, and the reply delivered as a
// signal (Cloudflare's sendEvent) ends the run with it.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { nudge } from '../../examples/migration/cloudflare-nudge.ts';

describe('migration from Cloudflare Workflows: the ported example', () => {
  it('event -> one run per id, sleep 2d, send with the key, reply by signal', async () => {
    const sent: string[] = [];
    const t = await createTestEngine({ workflows: [nudge({ loadUser: async () => ({ email: 'ada@example.com', activated: false }), send: async (to, key) => void sent.push(`${to} ${key}`) })] });
    const { runIds } = await t.engine.emit('user.signed_up', { userId: 'u1' }, { id: 'signup-u1' });
    expect((await t.engine.emit('user.signed_up', { userId: 'u1' }, { id: 'signup-u1' })).runIds).toEqual(runIds);
    const runId = runIds[0]!;
    await t.idle();
    expect((await t.engine.runs.get(runId)).status).toBe('sleeping');
    await t.advance('2d');
    expect(sent).toEqual([`ada@example.com ${runId}/nudge`]);
    expect((await t.engine.runs.get(runId)).status).toBe('waiting');
    await t.engine.signal(runId, 'reply', { text: 'thanks!' });
    await t.idle();
    expect((await t.engine.runs.get(runId)).output).toEqual({ nudged: true, reply: 'thanks!' });
    await t.close();
  });
});
