// Type test (compiled by `npx tsc --noEmit -p .`, never run): a workflow's input schema types
// `input` in its run function, `engine.trigger(definition, input)` checks the input against it,
// and `engine.result(runId)` of that trigger types the output. Each @ts-expect-error line must
// fail to compile: were the inference lost, tsc would report the directive as unused.
import * as z from 'zod';
import { manual, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';

const order = workflow('order', { input: z.object({ sku: z.string(), qty: z.number() }), output: z.object({ shipped: z.number() }) }, (w) => {
  w.trigger(manual());
  w.run(async ({ input }) => {
    const qty: number = input.qty;
    // @ts-expect-error: input has no field 'price'
    void input.price;
    // @ts-expect-error: sku is a string
    const n: number = input.sku;
    void n;
    return { shipped: qty };
  });
});

const untyped = workflow('untyped', (w) => {
  w.trigger(manual());
  w.run(async ({ input }) => input.anything); // no schema: input is any, as before
});

export async function typed(engine: Engine): Promise<void> {
  const { runId } = await engine.trigger(order, { sku: 'a', qty: 1 });
  // @ts-expect-error: qty must be a number
  await engine.trigger(order, { sku: 'a', qty: '1' });
  // @ts-expect-error: sku is missing
  await engine.trigger(order, { qty: 1 });
  const view = await engine.result(runId);
  const shipped: number | undefined = view.output?.shipped;
  // @ts-expect-error: the output has no field 'lost'
  void view.output?.lost;
  void shipped;
  // By name: unchecked, as before.
  const byName = await engine.trigger('order', { anything: true });
  const plain = await engine.result(byName.runId);
  void plain.output;
  await engine.trigger(untyped, { whatever: 1 });
}
