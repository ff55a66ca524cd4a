// The typed-boundary cases (test/conformance/schemas.ts) THROUGH THE RUNNER: the workflows'
// zod schemas are declared in workflow files, so the engine checks trigger input, event
// payloads, webhook bodies and signals by asking the file's check child (no permission) to
// run them (src/adapters/deno/schema-checks.ts), and the run child checks the output. The same
// values are refused with the same one-line errors as in-process, nothing stored.
import { expect } from 'vitest';
import { OUT_PERMISSIONS, until } from './harness.ts';
import type { FileKit } from './suite.ts';

const ORDER = `import * as z from 'zod';
import { webhook } from '@tranquil/sdk';
const order = z.object({ sku: z.string().min(1), qty: z.number().int().positive(), note: z.string().default('') });`;

export function schemaFileScenarios({ test, boot }: FileKit): void {
  test('schemas: bad input is refused at trigger, emit and webhook (400) in one line naming workflow, field and rule; nothing stored', async () => {
    const rig = await boot([`${ORDER}
export default workflow('typed-order', { input: order }, (w) => {
  w.trigger(manual());
  w.trigger(event('order.placed'));
  w.trigger(webhook({ path: 'typed-order' }));
  w.run(async ({ input, step }) => step.do('ship', () => \`\${input.qty} x \${input.sku}\${input.note}\`));
});`, `import * as z from 'zod';
export default workflow('typed-paid', (w) => {
  w.trigger(event('order.paid', { schema: z.object({ amount: z.number().positive() }) }));
  w.run(async ({ input }) => input);
});`]);
    const engine = rig.engine;
    await expect(engine.trigger('typed-order', { sku: 'a', qty: 0 })).rejects.toMatchObject({
      name: 'ValidationError', message: "workflow 'typed-order' input: qty: Too small: expected number to be >0",
    });
    await expect(engine.trigger('typed-order', { sku: '', qty: 1, note: '' })).rejects.toThrow("workflow 'typed-order' input: sku: Too small: expected string to have >=1 characters");
    expect(await engine.runs.list({ workflow: 'typed-order' })).toEqual([]);
    await expect(engine.emit('order.placed', { sku: 'a' }, { id: 'bad-1' })).rejects.toThrow(
      "event 'order.placed' payload for workflow 'typed-order' input: qty: Invalid input: expected number, received undefined",
    );
    await expect(engine.emit('order.paid', { amount: -1 }, { id: 'bad-2' })).rejects.toThrow("event 'order.paid' payload for workflow 'typed-paid': amount: Too small: expected number to be >0");
    expect(await engine.events.list({})).toEqual([]);
    const url = await engine.webhookUrl('typed-order');
    const res = await fetch(url, { method: 'POST', body: JSON.stringify({ sku: 'a', qty: 'two' }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^.*workflow 'typed-order' input: qty: Invalid input: expected number, received string$/);
    expect(await engine.runs.list({ workflow: 'typed-order' })).toEqual([]);
    // Good input runs, parsed by the schema (its default filled in).
    const { runId } = await engine.trigger('typed-order', { sku: 'a', qty: 2, note: '!' });
    expect((await engine.result(runId, { timeout: '60s' })).output).toBe('2 x a!');
    const byName = await engine.trigger('typed-order', { sku: 'b', qty: 1 });
    expect((await engine.result(byName.runId, { timeout: '60s' })).output).toBe('1 x b');
    expect((await engine.runs.get(byName.runId)).input).toEqual({ sku: 'b', qty: 1, note: '' });
  }, 120_000);

  test('schemas: a signal that fails its declared schema is refused to the sender and the wait goes on; an output that fails fails the run', async () => {
    const rig = await boot(`import * as z from 'zod';
export default workflow('typed-approval', { signals: { decision: z.object({ approved: z.boolean(), by: z.string() }) }, output: z.string().startsWith('ok') }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => {
    const d = await step.waitForEvent('decision', { timeout: '60s' });
    return input?.bad ? \`nope by \${d.by}\` : \`ok \${d.approved} by \${d.by}\`;
  });
});`);
    const engine = rig.engine;
    const { runId } = await engine.trigger('typed-approval', null);
    await until('run to wait', async () => (await engine.runs.get(runId)).status === 'waiting');
    await expect(engine.signal(runId, 'decision', { approved: 'yes' })).rejects.toThrow(
      `signal 'decision' to run ${runId} (workflow 'typed-approval'): approved: Invalid input: expected boolean, received string`,
    );
    expect((await engine.runs.get(runId)).status).toBe('waiting');
    await engine.signal(runId, 'decision', { approved: true, by: 'ana' });
    expect((await engine.result(runId, { timeout: '60s' })).output).toBe('ok true by ana');
    const bad = (await engine.trigger('typed-approval', { bad: true })).runId;
    await until('run to wait', async () => (await engine.runs.get(bad)).status === 'waiting');
    await engine.signal(bad, 'decision', { approved: false, by: 'bo' });
    const failed = await engine.result(bad, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ name: 'ValidationError', message: "workflow 'typed-approval' output: Invalid string: must start with \"ok\"" });
  }, 120_000);

  test('schemas: a ctx.emit payload that an event schema refuses rejects that emit in one line naming event and field; caught, the run goes on; nothing published; a replay throws it again', async () => {
    const rig = await boot([`import * as z from 'zod';
export default workflow('emit-paid', (w) => {
  w.trigger(event('emit.paid', { schema: z.object({ amount: z.number().positive() }) }));
  w.run(async ({ input }) => input);
});`, `export default workflow('emit-seller', { permissions: ${OUT_PERMISSIONS} }, (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx, input }) => {
    let caught = 'nothing';
    try {
      await ctx.emit('emit.paid', { amount: -1 });
    } catch (err) {
      caught = err.name + ': ' + err.message;
    }
    if (input?.uncaught) await ctx.emit('emit.paid', { amount: 'ten' });
    await step.do('after', () => (hit('after'), 'after'));
    await step.waitForEvent('go', { timeout: '60s' });
    await ctx.emit('emit.paid', { amount: 5 });
    return caught;
  });
});`]);
    const { runId } = await rig.engine.trigger('emit-seller', null);
    await until('run to wait', async () => (await rig.engine.runs.get(runId)).status === 'waiting');
    expect(await rig.engine.events.list({})).toEqual([]);
    const refused = (await rig.engine.runs.get(runId)).steps.find((s) => s.kind === 'emit');
    expect(refused).toMatchObject({ status: 'failed', error: { name: 'ValidationError', message: "event 'emit.paid' payload for workflow 'emit-paid': amount: Too small: expected number to be >0" } });
    const again = await rig.restart();
    await again.signal(runId, 'go', null);
    const view = await again.result(runId, { timeout: '60s' });
    expect(view.output).toBe("ValidationError: event 'emit.paid' payload for workflow 'emit-paid': amount: Too small: expected number to be >0");
    expect(rig.hits('after')).toBe(1);
    expect((await again.events.list({})).map((e) => e.payload)).toEqual([{ amount: 5 }]);
    await until('the accepted event to start its run', async () => (await again.runs.list({ workflow: 'emit-paid' })).length === 1);
    const bad = (await again.trigger('emit-seller', { uncaught: true })).runId;
    const failed = await again.result(bad, { timeout: '60s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ name: 'ValidationError', message: "event 'emit.paid' payload for workflow 'emit-paid': amount: Invalid input: expected number, received string" });
    expect((await again.events.list({})).length).toBe(1);
  }, 120_000);
}
