// Recipe: an LLM agent loop. Each model call and each tool call is a step, so a crash or a
// deploy mid-conversation resumes where it was (no model call or tool call is paid twice
// once recorded), and a tool marked `approval` waits, durably and for up to a day, for a
// person's signal before it runs. The conversation is rebuilt on replay from the recorded
// results, so the code between steps stays deterministic. Test: test/recipes/agent.test.ts.
import { manual, TerminalError, workflow } from '@tranquil/sdk';

export type Message = { role: 'user' | 'assistant' | 'tool'; content: string; tool?: string };
/** What the model answers: a tool to call, or the final answer. */
export type Reply = { tool: { name: string; args: Record<string, string> } } | { answer: string };
export interface Model { complete(messages: Message[]): Promise<Reply> }
export interface Tool { approval?: boolean; run(args: Record<string, string>, key: string): Promise<string> }

export function agent(model: Model, tools: Record<string, Tool>, maxTurns = 8) {
  return workflow<{ task: string }, { answer: string; turns: number }>('agent', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step }) => {
      const messages: Message[] = [{ role: 'user', content: input.task }];
      for (let turn = 1; turn <= maxTurns; turn++) {
        const reply = await step.do(`model-${turn}`, { retries: { limit: 3, delay: '5s' }, timeout: '2m' }, () => model.complete(messages));
        if ('answer' in reply) return { answer: reply.answer, turns: turn };
        const { name, args } = reply.tool;
        messages.push({ role: 'assistant', content: JSON.stringify(reply.tool) });
        const tool = tools[name];
        if (!tool) {
          messages.push({ role: 'tool', tool: name, content: `no tool named ${name}` });
          continue;
        }
        if (tool.approval) {
          // `tranquil signal <runId> approve-<turn> --data '{"ok":true}'`, the Runs panel, or engine.signal.
          const decision = await step.waitForEvent<{ ok: boolean; note?: string }>(`approve-${turn}`, { timeout: '1d' });
          if (!decision.ok) {
            messages.push({ role: 'tool', tool: name, content: `a person declined: ${decision.note ?? 'no reason given'}` });
            continue;
          }
        }
        const result = await step.do(`tool-${turn}-${name}`, ({ idempotencyKey }) => tool.run(args, idempotencyKey));
        messages.push({ role: 'tool', tool: name, content: result });
      }
      throw new TerminalError(`agent: no answer after ${maxTurns} turns`);
    });
  });
}
