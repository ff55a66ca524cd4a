// Trigger cases THROUGH THE RUNNER (the in-process cases of the same names are in
// test/conformance/triggers.ts): a file's triggers are described by a child with no
// permission and registered by the engine, which checks a schedule's cron itself.
import { expect } from 'vitest';
import { until } from './harness.ts';
import type { FileKit } from './suite.ts';

export function triggerFileScenarios({ test, boot }: FileKit): void {
  test('an every-second schedule fires runs and records each slot', async () => {
    const rig = await boot(`
import { schedule } from '@tranquil/sdk';
export default workflow('ticker', (w) => {
  w.trigger(schedule('* * * * * *'));
  w.run(async ({ input, step }) => step.do('tick', () => input.slot));
});`);
    const { engine } = rig;
    await until('two scheduled runs', async () => (await engine.runs.list({ workflow: 'ticker', status: 'succeeded' })).length >= 2, 60_000);
    const slots = await engine.schedules.slots({ workflow: 'ticker', fate: 'fired' });
    expect(slots.length).toBeGreaterThanOrEqual(2);
    const runs = await engine.runs.list({ workflow: 'ticker' });
    for (const s of slots) expect(runs.map((r) => r.runId)).toContain(s.runId);
    expect(new Set(runs.map((r) => (r.input as { slot: string }).slot)).size).toBe(runs.length);
  });

  test('a file whose schedule is not a cron expression is refused at registration, naming the file', async () => {
    await expect(boot(`
import { schedule } from '@tranquil/sdk';
export default workflow('bad-ticker', (w) => {
  w.trigger(schedule('every tuesday'));
  w.run(async () => 1);
});`)).rejects.toThrow(/flow0\.ts: schedule\(cron\): 'every tuesday' is not a cron expression/);
  });
}
