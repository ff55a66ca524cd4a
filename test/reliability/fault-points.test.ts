// Every named fault point, turned into a crash: the engine is abandoned there (nothing is
// written after it), and a new engine on the same file finishes every acknowledged run with
// one result per step, one idempotency key per step and each emitted event once. Plus
// "pause here", and the registry's own rules.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { event, manual, workflow } from '@tranquil/sdk';
import { createTestEngine, type TestEngine } from '@tranquil/engine/testing';
import { FAULT_POINTS, FaultCrash, FaultPoints, type FaultPoint } from '../../src/adapters/sqlite/fault-points.ts';
import { snapshot } from '../fuzz/oracle.ts';

const dirs: string[] = [];
const open: TestEngine[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function fixture() {
  const attempts: { runId: string; step: string; key: string; value: string }[] = [];
  let n = 0;
  const body = (runId: string, step: string) => async ({ idempotencyKey }: { idempotencyKey: string }) => {
    const value = `${step}-${++n}`;
    attempts.push({ runId, step, key: idempotencyKey, value });
    await turns(2);
    return value;
  };
  const wf = workflow('fp', (w) => {
    w.trigger(manual());
    w.trigger(event('fp.kick'));
    w.run(async ({ step, ctx, input }) => {
      const a = await step.do('a', body(ctx.runId, 'a'));
      // A child run (one level: the child starts none), so 'after-child-start' is reached.
      if (!(input as { child?: boolean } | null)?.child) await step.start('kid', 'fp', { child: true });
      await step.sleep('nap', '1m');
      await ctx.emit('fp.done', { runId: ctx.runId });
      const b = await step.do('b', body(ctx.runId, 'b'));
      return { a, b };
    });
  });
  return { wf, attempts };
}

/** As the OS would after the process died: its pid no longer holds the lease. */
function ownerDied(dbFile: string): void {
  const db = new Database(dbFile);
  db.prepare(`UPDATE owner SET pid = ? WHERE id = 1`).run(2 ** 22 + 4242);
  db.close();
}

describe('crash at each fault point', () => {
  for (const point of FAULT_POINTS) {
    it(`'${point}': nothing is written after the crash; a restart finishes every acknowledged run once`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tranquil-fp-'));
      dirs.push(dir);
      const dbFile = join(dir, 'tranquil.db');
      const { wf, attempts } = fixture();
      const acked: string[] = [];
      let t: TestEngine | undefined;
      let clock = Date.parse('2026-05-01T00:00:00Z');
      // The lease point fires at start: let a first engine create the file, then crash the second at start.
      if (point === 'after-lease-claim') {
        const first = await createTestEngine({ dataDir: dir, workflows: [wf], startAt: clock });
        acked.push((await first.engine.trigger('fp', {}, { runId: 'before' })).runId);
        await first.close();
      }
      const faults = new FaultPoints().crash(point, point === 'mid-batch' ? 3 : 1);
      try {
        t = await createTestEngine({ dataDir: dir, workflows: [wf], startAt: clock, faults });
        for (let i = 0; i < 4 && !faults.crashedAt; i++) {
          try {
            acked.push((await t.engine.trigger('fp', { i }, { runId: `r${i}` })).runId);
            const e = await t.engine.emit('fp.kick', {}, { id: `kick-${i}` });
            acked.push(...e.runIds);
          } catch (err) {
            if (!faults.crashedAt) throw err;
          }
          await t.advance('2m').catch((err) => {
            if (!(err instanceof FaultCrash)) throw err;
          });
        }
      } catch (err) {
        if (!(err instanceof FaultCrash)) throw err;
      }
      expect(faults.crashedAt, `the engine reached '${point}'`).toBe(point);
      if (t) clock = t.now();
      // Dead: whatever its sessions still do, the file does not change.
      const frozen = snapshot(dbFile);
      await turns(20);
      if (t) t.clock.set(t.now() + 3_600_000);
      await turns(20);
      expect(snapshot(dbFile), 'a write after the crash').toBe(frozen);

      ownerDied(dbFile);
      const again = await createTestEngine({ dataDir: dir, workflows: [wf], startAt: clock });
      open.push(again);
      await again.advance('10m');
      const db = new Database(dbFile, { readonly: true });
      const runs = db.prepare(`SELECT run_id, status, output FROM runs`).all() as { run_id: string; status: string; output: string }[];
      const steps = db.prepare(`SELECT run_id, name, result FROM steps WHERE kind = 'do'`).all() as { run_id: string; name: string; result: string }[];
      const events = db.prepare(`SELECT id FROM events WHERE name = 'fp.done'`).all() as { id: string }[];
      db.close();
      for (const id of acked) expect(runs.map((r) => r.run_id), `acknowledged run ${id}`).toContain(id);
      for (const r of runs) {
        expect(r.status, r.run_id).toBe('succeeded');
        const out = JSON.parse(r.output) as Record<string, string>;
        for (const s of ['a', 'b']) {
          expect(out[s]).toBe(JSON.parse(steps.find((x) => x.run_id === r.run_id && x.name === s)!.result));
          const mine = attempts.filter((x) => x.runId === r.run_id && x.step === s);
          expect(mine.map((x) => x.value)).toContain(out[s]);
          expect(new Set(mine.map((x) => x.key))).toEqual(new Set([`${r.run_id}/${s}`]));
        }
        expect(events.filter((e) => e.id === `${r.run_id}/emit:fp.done`)).toHaveLength(1);
      }
    });
  }
});

describe('pause at a fault point', () => {
  it("'before-step-commit' holds the run before its step is journaled, release lets it go on", async () => {
    const { wf } = fixture();
    const faults = new FaultPoints();
    const t = await createTestEngine({ workflows: [wf], faults });
    open.push(t);
    const paused = faults.pause('before-step-commit');
    const { runId } = await t.engine.trigger('fp', {});
    await paused.reached;
    await turns(10);
    expect((await t.engine.runs.get(runId)).steps).toEqual([]);
    paused.release();
    await t.advance('5m');
    expect((await t.engine.runs.get(runId)).status).toBe('succeeded');
  });
});

describe('the registry', () => {
  it('unarmed it costs a lookup and changes nothing; it counts hits', () => {
    const f = new FaultPoints();
    expect(f.hit('after-step-commit')).toBeUndefined();
    expect(f.hits.get('after-step-commit')).toBe(1);
  });
  it('crash at the nth hit, then every hit stops the caller; pause only at async points', async () => {
    const f = new FaultPoints().crash('mid-emit', 2);
    let abandoned = 0;
    f.onCrash(() => abandoned++);
    expect(f.hit('mid-emit')).toBeUndefined();
    const p = f.hit('mid-emit');
    await expect(p).rejects.toBeInstanceOf(FaultCrash);
    expect(f.crashedAt).toBe('mid-emit');
    expect(abandoned).toBe(1);
    await expect(f.hit('after-step-commit')).rejects.toBeInstanceOf(FaultCrash);
    expect(() => new FaultPoints().pause('mid-emit' as FaultPoint)).toThrow(/synchronous/);
    expect(() => new FaultPoints().crash('nowhere' as FaultPoint)).toThrow(/unknown/);
  });
});
