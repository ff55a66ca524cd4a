// The agent-loop recipe (examples/recipes/agent.ts) on the test engine with a scripted model:
// a plain tool runs as a step; a tool that needs approval waits for the signal (and the run
// is `waiting` until it comes); a decline is told to the model; a restart mid-conversation
// pays for no recorded model call again.
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { agent, type Message, type Model, type Reply, type Tool } from '../../examples/recipes/agent.ts';

/** A model that answers from a script, and records what it was shown. */
function scripted(replies: Reply[]) {
  const seen: Message[][] = [];
  const model: Model = {
    async complete(messages) {
      seen.push(structuredClone(messages));
      const r = replies[seen.length - 1];
      if (!r) throw new Error('script exhausted');
      return r;
    },
  };
  return { model, seen };
}

function tools() {
  const ran: string[] = [];
  const t: Record<string, Tool> = {
    weather: { run: async (a) => (ran.push(`weather ${a.city}`), `sunny in ${a.city}`) },
    refund: { approval: true, run: async (a, key) => (ran.push(`refund ${a.order} ${key}`), `refunded ${a.order}`) },
  };
  return { t, ran };
}

describe('recipe: LLM agent loop', () => {
  it('tool calls are steps; an approval tool waits for the signal; the answer ends the run', async () => {
    const { model, seen } = scripted([
      { tool: { name: 'weather', args: { city: 'Lisbon' } } },
      { tool: { name: 'refund', args: { order: 'o-7' } } },
      { answer: 'Sunny, and o-7 is refunded.' },
    ]);
    const { t: toolset, ran } = tools();
    const t = await createTestEngine({ workflows: [agent(model, toolset)] });
    const { runId } = await t.engine.trigger('agent', { task: 'weather in Lisbon, and refund o-7' });
    await t.idle();
    expect((await t.engine.runs.get(runId)).status).toBe('waiting');
    expect(ran).toEqual(['weather Lisbon']);
    await t.engine.signal(runId, 'approve-2', { ok: true });
    await t.idle();
    const run = await t.engine.runs.get(runId);
    expect(run).toMatchObject({ status: 'succeeded', output: { answer: 'Sunny, and o-7 is refunded.', turns: 3 } });
    expect(ran).toEqual(['weather Lisbon', `refund o-7 ${runId}/tool-2-refund`]);
    expect(seen[2]!.at(-1)).toEqual({ role: 'tool', tool: 'refund', content: 'refunded o-7' });
    await t.close();
  });

  it('a declined approval is told to the model and the tool never runs', async () => {
    const { model, seen } = scripted([{ tool: { name: 'refund', args: { order: 'o-8' } } }, { answer: 'I could not refund o-8.' }]);
    const { t: toolset, ran } = tools();
    const t = await createTestEngine({ workflows: [agent(model, toolset)] });
    const { runId } = await t.engine.trigger('agent', { task: 'refund o-8' });
    await t.idle();
    await t.engine.signal(runId, 'approve-1', { ok: false, note: 'over the limit' });
    await t.idle();
    expect((await t.engine.runs.get(runId)).output).toEqual({ answer: 'I could not refund o-8.', turns: 2 });
    expect(ran).toEqual([]);
    expect(seen[1]!.at(-1)).toEqual({ role: 'tool', tool: 'refund', content: 'a person declined: over the limit' });
    await t.close();
  });

  it('after a restart while waiting for approval, no recorded model call is made again', async () => {
    const { model, seen } = scripted([{ tool: { name: 'refund', args: { order: 'o-9' } } }, { answer: 'done' }]);
    const { t: toolset } = tools();
    const first = await createTestEngine({ workflows: [agent(model, toolset)] });
    const { runId } = await first.engine.trigger('agent', { task: 'refund o-9' });
    await first.idle();
    await first.engine.stop();
    const second = await createTestEngine({ dataDir: first.dataDir, workflows: [agent(model, toolset)] });
    await second.engine.signal(runId, 'approve-1', { ok: true });
    await second.idle();
    expect((await second.engine.runs.get(runId)).output).toEqual({ answer: 'done', turns: 2 });
    expect(seen).toHaveLength(2); // model-1 replayed from the journal, only model-2 called
    await second.close();
    await first.close();
  });
});
