// Conformance scenarios for issue 13 (docs/data.md), called from runConformance(). The
// replay check: an in-flight run's journal, as the backend reports it, replays against the
// unchanged code and is flagged against reordered code, on every backend.
// The payload codec, called from
// runConformance(): on every backend, with a key configured (TRANQUIL_KEYS), no run input,
// step result, error detail, signal or event payload is stored in plain text, neither in the
// data dir's SQLite file (its -wal included) nor in Restate (its journal, state and promises
// as the admin API shows them, and every file of its data dir); a rotated keyring still reads
// what the old key wrote; a missing or wrong key is refused in one line with nothing changed.
// Each check has its control: the same run without a key DOES leave the text in the store,
// so a scan that could not see it would fail the test.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { manual, TerminalError, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';
import { AdminApi, sqlString } from '../../src/adapters/restate/admin-api.ts';
import { readAdminFile } from '../../src/adapters/restate/server-process.ts';
import type { ScenarioKit } from './triggers.ts';
import { decodeValue } from '../../src/domain/value-codec.ts';
import { checkInFlight } from '../../src/runtime/replay-check.ts';
import type { RunReader } from '../../src/ports/run-reader.ts';

const key = () => randomBytes(32).toString('hex');

/** Runs `fn` with TRANQUIL_KEYS set to `keys` (unset for undefined); the env is restored. */
async function withKeys<T>(keys: string | undefined, fn: () => Promise<T>): Promise<T> {
  const before = process.env.TRANQUIL_KEYS;
  if (keys === undefined) delete process.env.TRANQUIL_KEYS;
  else process.env.TRANQUIL_KEYS = keys;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.TRANQUIL_KEYS;
    else process.env.TRANQUIL_KEYS = before;
  }
}

const secrets = workflow('codec-secrets', (w) => {
  w.trigger(manual());
  w.run(async ({ input, step, ctx }) => {
    const s = (input as { secret: string }).secret;
    // A tagged value (docs/values.md) too: the key seals the codec's stored form as it is.
    const fetched = await step.do('fetch', () => ({ token: `${s}-result`, lines: new Map([[`${s}-map`, new Date(0)]]), n: 10n }));
    let caught = '';
    try {
      await step.do('boom', { retries: { limit: 1 } }, () => {
        throw new TerminalError(`${s}-error`);
      });
    } catch (err) {
      caught = (err as Error).message;
    }
    const reply = await step.waitForEvent('reply');
    await ctx.emit('codec.emitted', { secret: `${s}-event` });
    return { fetched, caught, reply, out: `${s}-output` };
  });
});

const expected = (s: string) => ({ fetched: { token: `${s}-result`, lines: new Map([[`${s}-map`, new Date(0)]]), n: 10n }, caught: `${s}-error`, reply: { text: `${s}-signal` }, out: `${s}-output` });

/** One run of `secrets` that passes `s` through every kind of payload, to its end. */
async function runSecrets(engine: Engine, s: string): Promise<string> {
  const { runId } = await engine.trigger('codec-secrets', { secret: s });
  await engine.signal(runId, 'reply', { text: `${s}-signal` });
  const view = await engine.result(runId, { timeout: '30s' });
  expect(view.status).toBe('succeeded');
  expect(view.output).toEqual(expected(s));
  expect(view.input).toEqual({ secret: s });
  return runId;
}

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const want = Buffer.from(needle);
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue; // removed while walking (a restate temp file)
      }
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(want)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** What Restate shows of one run: its journal, state and durable promises, as JSON text. */
async function restateRecords(dir: string, runId: string): Promise<string> {
  const admin = readAdminFile(dir);
  if (!admin) throw new Error(`no restate admin address recorded in ${dir}`);
  const api = new AdminApi(admin.adminUrl);
  const ids = await api.query<{ id: string }>(`SELECT id FROM sys_invocation WHERE target_service_key = ${sqlString(runId)}`);
  expect(ids.length).toBeGreaterThan(0);
  const parts: unknown[] = [];
  for (const { id } of ids) parts.push(await api.query(`SELECT * FROM sys_journal WHERE id = ${sqlString(id)}`));
  parts.push(await api.query(`SELECT * FROM state WHERE service_key = ${sqlString(runId)}`));
  parts.push(await api.query(`SELECT * FROM sys_promise WHERE service_key = ${sqlString(runId)}`));
  return JSON.stringify(parts);
}

/** The engine's own runs API as a RunReader (what `tranquil check` reads through). */
const readerOf = (engine: Engine): RunReader => ({
  getRun: (id) => engine.runs.get(id),
  listRuns: async (filter) => {
    const list = await engine.runs.list(filter);
    return { runs: [...list], next: list.next };
  },
  close: async () => {},
});

const order = (first: 'a' | 'b') =>
  workflow('check-order', (w) => {
    w.trigger(manual());
    w.run(async ({ step }) => {
      const x = await step.do(first, () => 1);
      await step.waitForEvent('go');
      return x + (await step.do(first === 'a' ? 'b' : 'a', () => 2));
    });
  });

export function codecScenarios({ test, boot, restart, until }: ScenarioKit, backend: string): void {
  test('replay check: an in-flight run passes against its code and is flagged against a reordered step', async () => {
    const { engine } = await boot([order('a')]);
    const { runId } = await engine.trigger('check-order', null);
    await until('the run waits', async () => (await engine.runs.get(runId)).status === 'waiting');
    expect(await checkInFlight(readerOf(engine), [order('a')])).toEqual([{ runId, workflow: 'check-order', ok: true, reached: 'suspended' }]);
    const [v] = await checkInFlight(readerOf(engine), [order('b')]);
    expect(v).toMatchObject({ runId, ok: false, position: 0, expected: "do 'b'", recorded: "do 'a'" });
    await engine.signal(runId, 'go', null);
    expect((await engine.result(runId, { timeout: '30s' })).output).toBe(3);
  });

  test('with a key configured no payload is stored in plain text (control: without one it is)', async () => {
    // Control: no key, the same payloads are found where the scan looks.
    const plain = `pl41n${randomBytes(6).toString('hex')}`;
    await withKeys(undefined, async () => {
      const { engine, dir } = await boot([secrets]);
      const runId = await runSecrets(engine, plain);
      if (backend === 'restate') expect(await restateRecords(dir, runId)).toContain(`${plain}-result`);
      await engine.stop();
      // The SQLite file, and on Restate its own store (RocksDB files under restate/).
      const hits = filesContaining(dir, plain);
      expect(hits.some((f) => f.includes('tranquil.db'))).toBe(true);
      if (backend === 'restate') expect(hits.some((f) => f.includes(`${join(dir, 'restate')}/`))).toBe(true);
    });
    const s = `s3cr3t${randomBytes(6).toString('hex')}`;
    await withKeys(`k1:${key()}`, async () => {
      const { engine, dir } = await boot([secrets]);
      const runId = await runSecrets(engine, s);
      // A fork carries the reused steps (its outbox row, Restate's run request): sealed too.
      const fork = await engine.runs.fork(runId, { from: (await engine.runs.get(runId)).steps.at(-1)!.seq });
      expect((await engine.result(fork.runId, { timeout: '30s' })).output).toEqual(expected(s));
      // Read back through the engine while it runs; the stores hold ciphertext only.
      if (backend === 'restate') {
        const records = await restateRecords(dir, runId);
        expect(records).not.toContain(s);
        expect(records).toContain('tq1.k1.');
        expect(await restateRecords(dir, fork.runId)).not.toContain(s);
      }
      const live = filesContaining(dir, s);
      await engine.stop();
      expect(live).toEqual([]);
      expect(filesContaining(dir, s)).toEqual([]);
      expect(filesContaining(dir, 'tq1.k1.').some((f) => f.includes('tranquil.db'))).toBe(true);
    });
  }, 90_000);

  test('a rotated keyring reads runs the old key wrote; new writes use the new key', async () => {
    const k1 = `k1:${key()}`;
    const k2 = `k2:${key()}`;
    const s = `r0t${randomBytes(6).toString('hex')}`;
    const { engine, dir, doneId, waitingId } = await withKeys(k1, async () => {
      const { engine, dir } = await boot([secrets]);
      const doneId = await runSecrets(engine, s);
      const { runId: waitingId } = await engine.trigger('codec-secrets', { secret: s });
      // Waiting before the restart: its next life replays what the old key sealed (on
      // Restate the replay's state writes must match the journal's bytes).
      await until('run waiting', async () => (await engine.runs.get(waitingId)).status === 'waiting');
      return { engine, dir, doneId, waitingId };
    });
    await withKeys(`${k2},${k1}`, async () => {
      const again = await restart(engine, [secrets], dir);
      expect(decodeValue((await again.runs.get(doneId))?.output)).toEqual(expected(s)); // views: the stored form
      await again.signal(waitingId, 'reply', { text: `${s}-signal` });
      const view = await again.result(waitingId, { timeout: '30s' });
      expect(view.output).toEqual(expected(s));
      if (backend === 'restate') expect(await restateRecords(dir, waitingId)).toContain('tq1.k2.');
      await again.stop();
      expect(filesContaining(dir, 'tq1.k2.').some((f) => f.includes('tranquil.db'))).toBe(true);
      expect(filesContaining(dir, s)).toEqual([]);
    });
  }, 90_000);

  test('a missing or wrong key is refused in one line and changes nothing', async () => {
    const k1 = `k1:${key()}`;
    const s = `wr0ng${randomBytes(6).toString('hex')}`;
    const { dir, runId } = await withKeys(k1, async () => {
      const { engine, dir } = await boot([secrets]);
      const runId = await runSecrets(engine, s);
      await engine.stop();
      return { dir, runId };
    });
    const db = join(dir, 'tranquil.db');
    const hash = () => createHash('sha256').update(readFileSync(db)).update(existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`) : '').digest('hex');
    const before = hash();
    const refused = async (keys: string | undefined, message: RegExp) =>
      withKeys(keys, async () => {
        const err = await boot([secrets], dir).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(err?.message).toMatch(message);
        expect(err?.message).not.toContain('\n');
      });
    await refused(`k1:${key()}`, /encryption key 'k1' is not the key this data dir was written with; nothing was changed/);
    await refused(undefined, /encrypted \(key 'k1'\) but no encryption key is configured/);
    await refused(`k9:${key()}`, /encrypted with key 'k1', which is not among the configured keys \(k9\)/);
    expect(hash()).toBe(before);
    await withKeys(k1, async () => {
      const { engine } = await boot([secrets], dir);
      expect(decodeValue((await engine.runs.get(runId))?.output)).toEqual(expected(s)); // views: the stored form
      await engine.stop();
    });
  }, 90_000);
}
