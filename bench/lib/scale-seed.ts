// Sleeping runs written straight into the schema the engine created (the engine would take
// minutes for 10^6), after one started through the engine: `n` runs of the bench sleeper (bench/lib/workflows.ts), each parked on its
// first step, `sleepUntil('until', at)`, exactly as the engine records one. Nine in ten sleep
// until 2036; every tenth until `dueAt()`, read after the inserts so the instant lies a fixed
// lead after the file is ready, whatever the inserts cost.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createEngine } from '../../compose/index.ts';
import { sleeper } from './workflows.ts';

export async function seedSleepers(dir: string, n: number, dueAt: () => number): Promise<number> {
  // One run started through the engine: the schema, and the workflow version the seeded rows
  // carry (a run of another version would be held when it wakes, not run).
  const far = Date.parse('2036-01-01T00:00:00Z');
  const schema = await createEngine({ dataDir: dir, workflows: [sleeper] });
  await schema.start();
  const { runId } = await schema.trigger(sleeper.name, { at: far });
  for (let i = 0; i < 100 && (await schema.runs.get(runId)).status !== 'sleeping'; i++) await new Promise((r) => setTimeout(r, 20));
  await schema.stop();
  const db = new Database(join(dir, 'tranquil.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF'); // preparation only: the engine under test opens it normally
    const { version, base } = db.prepare(`SELECT version, max(created_seq) AS base FROM runs`).get() as { version: string; base: number };
    const run = db.prepare(`INSERT INTO runs (run_id, workflow, version, status, input, created_at, updated_at, wake_at, created_seq)
                            VALUES (?, ?, ?, 'sleeping', ?, ?, ?, ?, ?)`);
    const step = db.prepare(`INSERT INTO steps (run_seq, run_id, seq, name, kind, status, attempts, started_at, wake_at)
                             VALUES (?, ?, 0, 'until', 'sleep', 'sleeping', 1, ?, ?)`);
    const now = Date.now();
    const input = JSON.stringify({ at: far });
    db.transaction(() => {
      for (let i = base + 1; i <= base + n; i++) {
        const id = `sleep-${i.toString(36).padStart(8, '0')}`;
        run.run(id, sleeper.name, version, input, now, now, far, i);
        step.run(i, id, now, far);
      }
    })();
    const at = dueAt();
    db.transaction(() => {
      db.prepare(`UPDATE runs SET wake_at = ?, input = ? WHERE created_seq % 10 = 0`).run(at, JSON.stringify({ at }));
      db.prepare(`UPDATE steps SET wake_at = ? WHERE run_seq % 10 = 0`).run(at);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return at;
  } finally {
    db.close();
  }
}
