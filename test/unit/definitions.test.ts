import { describe, expect, it } from 'vitest';
import { event, manual, schedule, webhook, workflow } from '../../sdk/index.ts';
import { createEngine } from '../../compose/index.ts';

const noop = async () => null;

describe('workflow definitions are validated when declared', () => {
  it.each([
    ['an empty name', () => workflow('', (w) => w.run(noop)), /workflow name: must not be empty/],
    ['a name with spaces', () => workflow('my flow', (w) => w.run(noop)), /workflow name: must start with a letter/],
    ['a missing run', () => workflow('x', (w) => w.trigger(manual())), /workflow 'x' run: missing/],
    ['two runs', () => workflow('x', (w) => { w.run(noop); w.run(noop); }), /run: declared twice/],
    ['a duplicate trigger', () => workflow('x', (w) => { w.trigger(event('a')); w.trigger(event('a')); w.run(noop); }), /trigger: duplicate event:a/],
    ['a bad cron', () => schedule('61 * * * *'), /schedule\(cron\): '61 \* \* \* \*' is not a cron expression/],
    ['an unknown time zone', () => schedule('0 9 * * *', { timezone: 'Mars/Olympus' }), /unknown time zone 'Mars\/Olympus'/],
    ['a bad catch-up policy', () => schedule('0 9 * * *', { catchUp: 'some' as never }), /schedule options/],
    ['an empty event name', () => event(''), /event\(name\)/],
    ['a bad webhook path', () => webhook({ path: 'a/b c' }), /webhook path/],
    ['a bad webhook validator', () => webhook({ path: 'p', validate: 42 as never }), /webhook validate/],
    ['a bad default duration', () => workflow('x', (w) => { w.defaults({ timeout: '5 parsecs' }); w.run(noop); }), /options\.timeout/],
    ['a bad default retry limit', () => workflow('x', (w) => { w.defaults({ retries: { limit: 0 } }); w.run(noop); }), /options\.retries\.limit/],
    ['an unknown default option', () => workflow('x', (w) => { w.defaults({ retry: {} } as never); w.run(noop); }), /options/],
  ])('rejects %s', (_what, make, message) => {
    expect(make).toThrow(message);
  });

  it('accepts the contract example', () => {
    const wf = workflow('activation-nudge', (w) => {
      w.trigger(event('user.signed_up'));
      w.trigger(schedule('0 9 * * *', { timezone: 'Europe/Berlin', catchUp: 'all' }));
      w.trigger(webhook({ path: 'signup' }));
      w.run(noop);
    });
    expect(wf.triggers.map((t) => t.type)).toEqual(['event', 'schedule', 'webhook']);
    expect(Object.isFrozen(wf)).toBe(true);
  });
});

describe('engine config is validated', () => {
  it.each([
    [{ backend: 'postgres' }, /engine config\.backend/],
    [{ dataDir: '' }, /engine config\.dataDir/],
    [{ workflows: [{}] }, /workflows\[0\]: not a workflow\(\) definition/],
    [{ webhook: { port: 70000 } }, /engine config\.webhook\.port/],
    [{ extra: true }, /engine config/],
    [{ maxPayloadBytes: 100 }, /^engine config\.maxPayloadBytes: at least 1024$/],
    [{ maxPayloadBytes: 512 * 1024 * 1024 }, /^engine config\.maxPayloadBytes: at most 256 MiB$/],
    [{ backend: 'restate', maxPayloadBytes: 31 * 1024 * 1024 }, /^engine config\.maxPayloadBytes: at most 30 MiB \(31457280\) on backend 'restate'/],
  ])('rejects %j', async (config, message) => {
    await expect(createEngine(config as never)).rejects.toThrow(message);
  });
  it('rejects the same workflow twice', async () => {
    const wf = workflow('dup', (w) => w.run(noop));
    await expect(createEngine({ workflows: [wf, wf] })).rejects.toThrow(/registered twice/);
  });
});
