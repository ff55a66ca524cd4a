// The ported Inngest example (examples/migration/inngest-nudge.ts) behaves as
// docs/migrate-inngest.md says: started by the app with the user's run id, the reply as a
// signal to that run, no reply within 7 days is null (Inngest's waitForEvent timeout), and
// the follow-up event is emitted once.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { nudge, nudgeRunId } from '../../examples/migration/inngest-nudge.ts';

const app = () => ({ loadUser: async () => ({ email: 'ada@example.com', activated: false }), send: async () => {} });

describe('migration from Inngest: the ported example', () => {
  it('a reply signalled to the run; no reply in 7 days is null; the follow-up event is emitted', async () => {
    const t = await createTestEngine({ workflows: [nudge(app())] });
    await t.engine.trigger('activation-nudge', { userId: 'u1' }, { runId: nudgeRunId('u1') });
    await t.engine.trigger('activation-nudge', { userId: 'u2' }, { runId: nudgeRunId('u2') });
    await t.advance('2d');
    await t.engine.signal(nudgeRunId('u1'), 'reply', { text: 'thanks!' });
    await t.advance('7d');
    expect((await t.engine.runs.get(nudgeRunId('u1'))).output).toEqual({ nudged: true, reply: 'thanks!' });
    expect((await t.engine.runs.get(nudgeRunId('u2'))).output).toEqual({ nudged: true, reply: null });
    const emitted = await t.engine.events.list({ name: 'user.nudged' });
    expect(emitted.map((e) => e.payload).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ userId: 'u1', replied: true }, { userId: 'u2', replied: false }]);
    await t.close();
  });
});
