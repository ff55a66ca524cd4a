// Conformance scenarios for child runs (issue 40, docs/children.md), called from
// runConformance(): workflows that start and await other workflows' runs, their links in the
// views, and the lifecycle rules that span parent and child (cancel, retry, cycles, depth),
// plus signals between runs. Every case runs on SQLite and on Restate.
import { expect } from 'vitest';
import { CancelledError, ChildRunError, TerminalError, TimeoutError, manual, workflow } from '@tranquil/sdk';
import type { ScenarioKit } from './triggers.ts';

export function childScenarios({ test, boot, restart, until }: ScenarioKit, backend: string): void {
  test('step.invoke runs a child and returns its output; parent and child views show the link', async () => {
    let childBodies = 0;
    const payment = workflow('payment', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => step.do('charge', () => (childBodies++, { charged: (input as { amount: number }).amount })));
    });
    const order = workflow('order', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const paid = await step.invoke('pay', payment, { amount: 42 });
        return { paid };
      });
    });
    const { engine } = await boot([payment, order]);
    const { runId } = await engine.trigger('order', null, { runId: 'ord-1' });
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual({ paid: { charged: 42 } });
    expect(childBodies).toBe(1);
    const parent = await engine.runs.get(runId);
    expect(parent.children).toEqual([{ runId: 'ord-1:pay', workflow: 'payment', step: 'pay', status: 'succeeded' }]);
    expect(parent.steps.map((s) => [s.name, s.kind, s.status])).toEqual([['pay', 'do', 'succeeded'], ['child:ord-1:pay', 'wait', 'succeeded']]);
    const child = await engine.runs.get('ord-1:pay');
    expect(child.parent).toEqual({ runId: 'ord-1', step: 'pay', depth: 1, onParentCancel: 'cancel' });
    expect((await engine.runs.list({ parent: runId })).map((r) => r.runId)).toEqual(['ord-1:pay']);
  });

  test('step.start returns the child run id at once; step.result awaits it later', async () => {
    const slow = workflow('slow-child', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        await step.sleep('nap', 200);
        return `done ${String(input)}`;
      });
    });
    const parent = workflow('starter', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const id = await step.start('kid', slow, 'x', { runId: 'custom-kid' });
        const mine = await step.do('meanwhile', () => 'parent went on');
        return { id, mine, got: await step.result(id) };
      });
    });
    const { engine } = await boot([slow, parent]);
    const view = await engine.result((await engine.trigger('starter', null)).runId, { timeout: '30s' });
    expect(view.output).toEqual({ id: 'custom-kid', mine: 'parent went on', got: 'done x' });
    expect((await engine.runs.get('custom-kid')).parent?.step).toBe('kid');
  });

  test('a fan-out of children with Promise.all: one run per child, outputs in call order', async () => {
    const N = 100;
    const runs = new Map<string, number>();
    const square = workflow('square', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step, ctx }) => step.do('sq', () => (runs.set(ctx.runId, (runs.get(ctx.runId) ?? 0) + 1), (input as number) ** 2)));
    });
    let executions = 0;
    const fan = workflow('fan', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => (executions++, Promise.all(Array.from({ length: N }, (_, i) => step.invoke(`tenant-${i}`, square, i)))));
    });
    const { engine } = await boot([square, fan]);
    const { runId } = await engine.trigger('fan', null);
    const view = await engine.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(Array.from({ length: N }, (_, i) => i * i));
    expect(runs.size).toBe(N);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect((await engine.runs.get(runId)).children).toHaveLength(N);
    // Children that end while the parent is queued or replaying share one replay (2 when
    // measured on both backends): not one replay of the whole journal per child's end.
    expect(executions).toBeLessThanOrEqual(N / 4);
  }, 120_000);

  test('a failed child reaches the parent as ChildRunError with the child error as cause', async () => {
    const failing = workflow('declines', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.do('charge', () => {
          throw Object.assign(new TerminalError('card declined'), { code: 'E_DECLINED' });
        });
      });
    });
    const parent = workflow('buyer', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => {
        try {
          return await step.invoke('pay', failing, null);
        } catch (err) {
          if (!(input as { catchIt: boolean }).catchIt) throw err;
          const e = err as ChildRunError & { childRunId: string; cause: Error & { code?: string } };
          return { isChildRunError: err instanceof ChildRunError, child: e.childRunId, cause: { name: e.cause.name, message: e.cause.message, code: e.cause.code } };
        }
      });
    });
    const { engine } = await boot([failing, parent]);
    const caught = await engine.result((await engine.trigger('buyer', { catchIt: true }, { runId: 'b1' })).runId, { timeout: '30s' });
    expect(caught.output).toEqual({ isChildRunError: true, child: 'b1:pay', cause: { name: 'TerminalError', message: 'card declined', code: 'E_DECLINED' } });
    const failed = await engine.result((await engine.trigger('buyer', { catchIt: false }, { runId: 'b2' })).runId, { timeout: '30s' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      name: 'ChildRunError', message: "child run b2:pay of workflow 'declines' failed: TerminalError: card declined",
      fields: { childRunId: 'b2:pay', status: 'failed', workflow: 'declines' }, cause: { name: 'TerminalError', message: 'card declined', fields: { code: 'E_DECLINED' } },
    });
  });

  test('a child still running past the invoke timeout gives TimeoutError in the parent', async () => {
    const stuck = workflow('stuck', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent('never', { timeout: '30s' }));
    });
    const parent = workflow('impatient', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        try {
          await step.invoke('wait-kid', stuck, null, { timeout: 300 });
          return 'no timeout';
        } catch (err) {
          return { timeout: err instanceof TimeoutError, message: (err as Error).message };
        }
      });
    });
    const { engine } = await boot([stuck, parent]);
    const { runId } = await engine.trigger('impatient', null, { runId: 'imp' });
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.output).toEqual({ timeout: true, message: 'child run imp:wait-kid did not finish within 300ms' });
    // The child keeps running: a timeout is the parent's, not the child's.
    expect((await engine.runs.get('imp:wait-kid')).status).toBe('waiting');
  });

  test('cancelling a parent cancels its children, whose cleanup runs; an abandoned child runs on', async () => {
    const cleaned: string[] = [];
    const child = workflow('long-child', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        try {
          return await step.waitForEvent('go', { timeout: '60s' });
        } catch (err) {
          if (err instanceof CancelledError) await step.do('cleanup', () => void cleaned.push(ctx.runId));
          throw err;
        }
      });
    });
    const parent = workflow('holder', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        await step.start('kept', child, null, { onParentCancel: 'abandon' });
        await step.invoke('owned', child, null);
      });
    });
    const { engine } = await boot([child, parent]);
    const { runId } = await engine.trigger('holder', null, { runId: 'h' });
    await until('both children waiting', async () => (await engine.runs.list({ parent: runId })).filter((r) => r.status === 'waiting').length === 2);
    await until('parent waiting', async () => (await engine.runs.get(runId)).status === 'waiting');
    await engine.runs.cancel(runId);
    expect((await engine.result(runId, { timeout: '30s' })).status).toBe('cancelled');
    const owned = await engine.result('h:owned', { timeout: '30s' });
    expect(owned.status).toBe('cancelled');
    expect(owned.cancel?.by).toBe('parent run h');
    expect(cleaned).toEqual(['h:owned']);
    expect((await engine.runs.get('h:kept')).status).toBe('waiting');
    await engine.signal('h:kept', 'go', 'still mine');
    expect((await engine.result('h:kept', { timeout: '30s' })).output).toBe('still mine');
  });

  test('retrying a failed parent reuses succeeded children and retries the failed child in place', async () => {
    const bodies: string[] = [];
    let healthy = false;
    const part = workflow('part', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step, ctx }) =>
        step.do('work', () => {
          bodies.push(ctx.runId);
          if (input === 'flaky' && !healthy) throw new TerminalError('not yet');
          return `${String(input)} ok`;
        }));
    });
    const parent = workflow('assembler', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => Promise.all([step.invoke('a', part, 'a'), step.invoke('b', part, 'flaky'), step.invoke('c', part, 'c')]));
    });
    const { engine } = await boot([part, parent]);
    const { runId } = await engine.trigger('assembler', null, { runId: 'as' });
    const failed = await engine.result(runId, { timeout: '30s' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.name).toBe('ChildRunError');
    await until('all children ended', async () => (await engine.runs.list({ parent: runId })).every((r) => r.status === 'succeeded' || r.status === 'failed'));
    healthy = true;
    await engine.runs.retry(runId);
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual(['a ok', 'flaky ok', 'c ok']);
    // One run per child (no duplicate), and only the failed child's body ran again.
    expect((await engine.runs.list({ parent: runId })).map((r) => r.runId).sort()).toEqual(['as:a', 'as:b', 'as:c']);
    expect(bodies.filter((id) => id === 'as:a')).toHaveLength(1);
    expect(bodies.filter((id) => id === 'as:c')).toHaveLength(1);
    expect(bodies.filter((id) => id === 'as:b')).toHaveLength(2);
  });

  test('grandchildren: a child invokes its own child; why names the child a parent waits for', async () => {
    const leaf = workflow('leaf', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent<string>('release', { timeout: '60s' }));
    });
    const mid = workflow('mid', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => `mid(${await step.invoke<string>('leaf', leaf, null)})`);
    });
    const top = workflow('top', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => `top(${await step.invoke<string>('mid', mid, null)})`);
    });
    const { engine } = await boot([leaf, mid, top]);
    const { runId } = await engine.trigger('top', null, { runId: 't' });
    await until('grandchild waiting', async () => (await engine.runs.get('t:mid:leaf').catch(() => undefined))?.status === 'waiting');
    await until('mid waiting', async () => (await engine.runs.get('t:mid')).status === 'waiting');
    await until('top waiting', async () => (await engine.runs.get(runId)).status === 'waiting');
    const why = await engine.runs.explain(runId);
    // Relative times ("in 59s") depend on when each explanation was made.
    const fixed = (text: string) => text.replace(/ \((in [^)]*|due now)\)/g, '');
    expect(fixed(why.summary)).toBe("Run t of workflow 'top' (version " + (await engine.runs.get(runId)).version + ") is waiting for child run t:mid of 'mid', which is waiting for child run t:mid:leaf of 'leaf', which " +
      fixed((await engine.runs.explain('t:mid:leaf')).summary).replace(/^Run t:mid:leaf of workflow 'leaf' \(version \w+\) /, ''));
    expect((await engine.runs.explain('t:mid:leaf')).summary).toContain("is waiting in step 'release' for signal 'release'");
    expect((await engine.runs.get('t:mid:leaf')).parent).toMatchObject({ runId: 't:mid', depth: 2 });
    await engine.signal('t:mid:leaf', 'release', 'leaf');
    expect((await engine.result(runId, { timeout: '30s' })).output).toBe('top(mid(leaf))');
  });

  test('a call cycle and runaway recursion are refused with a clear error', async () => {
    const selfish = workflow('selfish', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => step.invoke('again', 'selfish', null, { runId: ctx.runId }));
    });
    const deep = workflow('deep', (w) => {
      w.trigger(manual());
      w.run(async ({ step, input }) => ((input as number) >= 40 ? 'bottom' : step.invoke('down', 'deep', (input as number) + 1)));
    });
    const { engine } = await boot([selfish, deep]);
    const cyc = await engine.result((await engine.trigger('selfish', null, { runId: 'self' })).runId, { timeout: '30s' });
    expect(cyc.status).toBe('failed');
    expect(cyc.error?.message).toBe("step.invoke('again'): child run 'self' would be its own ancestor (call chain self -> self): a workflow cannot invoke a run it is part of");
    expect(await engine.runs.list({ parent: 'self' })).toEqual([]);
    const { runId } = await engine.trigger('deep', 0, { runId: 'd' });
    const bottom = `d${':down'.repeat(32)}`;
    await until('the deepest child failed', async () => (await engine.runs.get(bottom).catch(() => undefined))?.status === 'failed', 60_000);
    const refused = await engine.runs.get(bottom);
    expect(refused.error?.message).toBe(`step.invoke('down'): child run '${bottom}:down' would be at depth 33, past the limit of 32 nested child runs (runaway recursion?)`);
    // The refusal travels up as each parent's ChildRunError.
    const top = await engine.result(runId, { timeout: '60s' });
    expect(top.error?.name).toBe('ChildRunError');
  }, 90_000);

  test('ctx.signal between runs: a child tells its parent it is half done, the parent answers', async () => {
    const worker = workflow('worker', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx, input }) => {
        await ctx.signal((input as { parent: string }).parent, 'half', { from: ctx.runId });
        return `worker got ${await step.waitForEvent<string>('answer', { timeout: '30s' })}`;
      });
    });
    const boss = workflow('boss', (w) => {
      w.trigger(manual());
      w.run(async ({ step, ctx }) => {
        const id = await step.start('work', worker, { parent: ctx.runId });
        const half = await step.waitForEvent<{ from: string }>('half', { timeout: '30s' });
        await ctx.signal(id, 'answer', 'carry on');
        return { half, end: await step.result(id) };
      });
    });
    const { engine } = await boot([worker, boss]);
    const { runId } = await engine.trigger('boss', null, { runId: 'boss' });
    const view = await engine.result(runId, { timeout: '30s' });
    expect(view.output).toEqual({ half: { from: 'boss:work' }, end: 'worker got carry on' });
    expect(view.steps.filter((s) => s.name.startsWith('signal:')).map((s) => s.name)).toEqual(['signal:answer:boss:work']);
  });

  test('a parent restarted while it waits finds the same child when it ends', async () => {
    const child = workflow('later', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.waitForEvent<string>('finish', { timeout: '60s' }));
    });
    const parent = workflow('patient', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.invoke('kid', child, null));
    });
    const { engine, dir } = await boot([child, parent]);
    const { runId } = await engine.trigger('patient', null, { runId: 'p' });
    await until('child waiting', async () => (await engine.runs.get('p:kid').catch(() => undefined))?.status === 'waiting');
    await until('parent waiting', async () => (await engine.runs.get(runId)).status === 'waiting');
    const second = await restart(engine, [child, parent], dir);
    await second.signal('p:kid', 'finish', 'after restart');
    const view = await second.result(runId, { timeout: '30s' });
    expect(view.output).toBe('after restart');
    expect(await second.runs.list({ parent: runId })).toHaveLength(1);
  });

  // Wider than the window of step commands the Restate driver races at once (driver.ts):
  // the restarted parent replays its journal racing the same sets as when it wrote it.
  test('a fan-out of 100 children restarted while they wait: the parent replays and gets every output in call order', async () => {
    const N = 100;
    const child = workflow('held', (w) => {
      w.trigger(manual());
      w.run(async ({ input, step }) => {
        const base = await step.do('base', () => (input as number) * 10);
        return base + (await step.waitForEvent<number>('go', { timeout: '120s' }));
      });
    });
    const parent = workflow('wide', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => {
        const first = await step.do('first', () => 1);
        const outs = await Promise.all(Array.from({ length: N }, (_, i) => step.invoke<number>(`c${i}`, child, i)));
        return step.do('after', () => [first, ...outs]);
      });
    });
    const { engine, dir } = await boot([child, parent]);
    const { runId } = await engine.trigger('wide', null, { runId: 'w' });
    await until('children waiting', async () => (await engine.runs.list({ parent: 'w', limit: 1000 })).filter((r) => r.status === 'waiting').length === N, 90_000);
    await until('parent waiting', async () => (await engine.runs.get(runId)).status === 'waiting');
    const second = await restart(engine, [child, parent], dir);
    for (let i = 0; i < N; i++) await second.signal(`w:c${i}`, 'go', i % 7);
    const view = await second.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toEqual([1, ...Array.from({ length: N }, (_, i) => i * 10 + (i % 7))]);
    expect(await second.runs.list({ parent: runId, limit: 1000 })).toHaveLength(N);
  }, 240_000);
}
