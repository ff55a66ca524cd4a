// Issue 45: the embedded restate-server leaves nothing in the system temp dir. Its invokers
// make an invoker-<ulid> dir at every start and never remove it; the engine gives the server
// a temp dir of its own under the data dir, empties it on stop, and sweeps what a killed
// server left at the next start. The system temp dir seen by the engine (and so inherited by
// the server without the fix) is a fresh private dir here: other sessions run Restate on this
// machine, so /tmp itself cannot be compared.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine } from '@tranquil/engine';
import { removeDataDir } from './data-dir.ts';

const root = mkdtempSync(join(tmpdir(), 'tranquil-rs-tmpdirs-'));
const systemTmp = mkdtempSync(join(tmpdir(), 'tranquil-rs-systmp-'));
const dataDir = join(root, 'data');
const serverTmp = join(dataDir, 'restate', 'tmp');
const savedTmp = process.env.TMPDIR;

beforeAll(() => {
  process.env.TMPDIR = systemTmp;
});
afterAll(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  removeDataDir(root);
  removeDataDir(systemTmp);
});

const echo = workflow('echo', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => step.do('say', () => input));
});

const invokerDirs = () => readdirSync(serverTmp).filter((e) => e.startsWith('invoker-')).sort();
const serverPid = () => Number(readFileSync(join(dataDir, 'restate', 'server.pid'), 'utf8'));

async function runOnce(engine: Awaited<ReturnType<typeof createEngine>>, input: string): Promise<void> {
  const { runId } = await engine.trigger('echo', input);
  expect((await engine.result(runId, { timeout: '60s' })).output).toBe(input);
}

it('starts, a SIGKILL of restate-server and stops leave nothing in the system temp dir, and an empty temp dir in the data dir', async () => {
  let before: string[] = [];
  for (let i = 0; i < 3; i++) {
    // What a server killed with its engine (nobody left to empty the dir) leaves for the next start.
    if (i === 2) mkdirSync(join(serverTmp, 'invoker-left-by-a-crash', 'segment'), { recursive: true });
    const engine = await createEngine({ backend: 'restate', dataDir, workflows: [echo], log: { level: 'error' } });
    await engine.start();
    try {
      expect(invokerDirs()).not.toContain('invoker-left-by-a-crash');
      await runOnce(engine, `run ${i}`);
      // The server's invokers wrote where the engine told them to (so the checks below are not vacuous).
      expect(invokerDirs().length).toBeGreaterThan(0);
      if (i === 1) {
        // Killed: the engine starts it again, which sweeps the dead server's dirs first.
        before = invokerDirs();
        const pid = serverPid();
        process.kill(pid, 'SIGKILL');
        for (let t = 0; t < 600 && (serverPid() === pid || invokerDirs().length === 0); t++) await new Promise((r) => setTimeout(r, 100));
        await runOnce(engine, 'after the kill');
        expect(invokerDirs().length).toBeGreaterThan(0);
        expect(invokerDirs().filter((d) => before.includes(d))).toEqual([]);
      }
    } finally {
      await engine.stop();
    }
    expect(readdirSync(serverTmp)).toEqual([]);
    expect(readdirSync(systemTmp)).toEqual([]);
  }
}, 180_000);
