// The reference plain workflow, loaded as written, run end to end under the testing
// kit (real SQLite file, manual clock: the 48h wait passes in microseconds): an activated
// user is skipped, one that is not is nudged once with key nudge/<run id>, a mail action
// failing twice with a transient error then succeeding takes three attempts with one key,
// and a v3 run sleeping while v4 is registered finishes on v3.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { plainWorkflow, TerminalError, type Actions } from '@tranquil/engine';
import { REFERENCE } from './reference.ts';


const users: Record<string, { activated: boolean; email: string }> = {
  u1: { activated: true, email: 'one@example.com' },
  u2: { activated: false, email: 'two@example.com' },
};

function app(mailFailures = 0) {
  const sent: { input: unknown; key: string; attempt: number }[] = [];
  let failures = mailFailures;
  const actions: Actions = {
    'app.load_user': (input) => {
      const id = (input as { id: string }).id;
      const u = users[id];
      if (!u) throw new TerminalError(`no user ${id}`);
      return { id, ...u };
    },
    'mail.send_template': (input, ctx) => {
      sent.push({ input, key: ctx.key, attempt: ctx.attempt });
      if (failures-- > 0) throw Object.assign(new Error('mail server timed out'), { status: 503 });
      return { messageId: `m-${ctx.key}` };
    },
  };
  return { actions, sent };
}

describe('plain workflows: the reference definition under the testing kit', () => {
  const open: TestEngine[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function kit(actions: Actions, text = REFERENCE, dataDir?: string) {
    const t = await createTestEngine({ workflows: [plainWorkflow(text, { source: 'activation_nudge.yaml' })], actions, ...(dataDir ? { dataDir } : {}) });
    open.push(t);
    return t;
  }

  it('an activated user: the 48h wait passes, the gate is false, the run succeeds as skipped', async () => {
    const { actions, sent } = app();
    const t = await kit(actions);
    const { runIds } = await t.engine.emit('user.signed_up', { user_id: 'u1' });
    const runId = runIds[0]!;
    await t.idle();
    expect((await t.engine.runs.get(runId)).status).toBe('sleeping');
    await t.advance('48h');
    const run = await t.engine.result(runId);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ outcome: 'skipped', step: 'gate', condition: 'fetch.activated == false' });
    expect(run.version).toMatch(/^v3-[0-9a-f]{12}$/);
    expect(run.steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['pause', 'sleep', 'succeeded'], ['fetch', 'do', 'succeeded'], ['gate', 'do', 'succeeded'],
    ]);
    expect(run.steps[2]!.result).toBe(false);
    expect(sent).toEqual([]);
    const why = await t.engine.runs.explain(runId);
    expect(why.summary).toContain("skipped: condition 'fetch.activated == false' of step 'gate' was false");
  });

  it('a user that did not activate is nudged once, with key nudge/<run id>', async () => {
    const { actions, sent } = app();
    const t = await kit(actions);
    const { runIds } = await t.engine.emit('user.signed_up', { user_id: 'u2' });
    await t.advance('48h');
    const run = await t.engine.result(runIds[0]!);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ outcome: 'completed' });
    expect(sent).toEqual([{ input: { to: 'two@example.com', template: 'nudge' }, key: `nudge/${runIds[0]}`, attempt: 1 }]);
  });

  it('mail failing twice with a transient error, then succeeding: three attempts, the same key', async () => {
    const { actions, sent } = app(2);
    const t = await kit(actions);
    const { runId } = await t.engine.trigger('activation_nudge', { user_id: 'u2' });
    await t.advance('48h');
    expect((await t.engine.runs.get(runId)).status).toBe('retrying');
    await t.advance('10m');
    const run = await t.engine.result(runId);
    expect(run.status).toBe('succeeded');
    expect(sent.map((s) => [s.key, s.attempt])).toEqual([[`nudge/${runId}`, 1], [`nudge/${runId}`, 2], [`nudge/${runId}`, 3]]);
    expect(run.steps.find((s) => s.name === 'nudge')).toMatchObject({ status: 'succeeded', attempts: 3, result: { messageId: `m-nudge/${runId}` } });
  });

  it('attempts run out: the run is failed and stays inspectable', async () => {
    const { actions, sent } = app(5);
    const t = await kit(actions);
    const { runId } = await t.engine.trigger('activation_nudge', { user_id: 'u2' });
    await t.advance('48h');
    await t.advance('1h');
    const run = await t.engine.result(runId);
    expect(run.status).toBe('failed');
    expect(sent).toHaveLength(3);
    expect(run.steps.find((s) => s.name === 'nudge')).toMatchObject({ status: 'failed', attempts: 3, error: { message: 'mail server timed out' } });
    expect((await t.engine.runs.explain(runId)).summary).toContain("step 'nudge' failed on attempt 3");
  });

  it('a v3 run sleeping while v4 is registered finishes on v3; new runs start on v4', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-plain-'));
    dirs.push(dataDir);
    const { actions, sent } = app();
    const t3 = await kit(actions, REFERENCE, dataDir);
    const { runId } = await t3.engine.trigger('activation_nudge', { user_id: 'u2' });
    await t3.idle();
    const startAt = t3.now();
    await t3.close();
    open.splice(open.indexOf(t3), 1);
    // v4: a different template; the v3 run must still send 'nudge'.
    const v4 = REFERENCE.replace('version: 3', 'version: 4').replace('template: nudge', 'template: nudge_v4');
    const t4 = await createTestEngine({ workflows: [plainWorkflow(v4)], actions, dataDir, startAt });
    open.push(t4);
    await t4.advance('48h');
    const old = await t4.engine.result(runId);
    expect(old.status).toBe('succeeded');
    expect(old.version).toMatch(/^v3-/);
    const { runId: fresh } = await t4.engine.trigger('activation_nudge', { user_id: 'u2' });
    await t4.advance('48h');
    expect((await t4.engine.result(fresh)).version).toMatch(/^v4-/);
    expect(sent.map((s) => (s.input as { template: string }).template)).toEqual(['nudge', 'nudge_v4']);
  });

  it('registering other content under a stored version number is refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tranquil-plain-'));
    dirs.push(dataDir);
    const { actions } = app();
    const t = await kit(actions, REFERENCE, dataDir);
    await t.close();
    open.splice(open.indexOf(t), 1);
    const edited = REFERENCE.replace('template: nudge', 'template: other');
    await expect(createTestEngine({ workflows: [plainWorkflow(edited)], actions, dataDir })).rejects.toThrow(
      /^workflow 'activation_nudge' version 3 is already registered with different content \(hash [0-9a-f]{12}, .*v3-[0-9a-f]{12}\.yaml; this one is [0-9a-f]{12}\): a version is never edited in place; give the change a new version number$/,
    );
    // Comments and layout are not content: the same definition reformatted registers fine.
    const t2 = await createTestEngine({ workflows: [plainWorkflow(`# the same, reformatted\n${REFERENCE}`)], actions, dataDir });
    await t2.close();
  });

  it('an action no app registered is refused when the engine is built, at its line', async () => {
    const { actions } = app();
    const { 'mail.send_template': _, ...rest } = actions;
    await expect(createTestEngine({ workflows: [plainWorkflow(REFERENCE, { source: 'activation_nudge.yaml' })], actions: rest })).rejects.toThrow(
      "activation_nudge.yaml:13:13: steps[3].action: action 'mail.send_template' is not registered (engine config actions: 'app.load_user')",
    );
  });
});
