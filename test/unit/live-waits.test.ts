// A reader outside the executing process (the CLI) waits on the backend, not on a 200 ms
// poll (docs/live-output.md, "From the CLI"): an idle follower reads the run no more, a write
// wakes it at once; on SQLite the wake is a write to the data dir's file.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunView, StepView } from '../../src/domain/run-view.ts';
import { liveOutputApi } from '../../src/runtime/live-output.ts';
import { StepEvents, type RemoteStepEvents, type StepEvent } from '../../src/runtime/step-events.ts';
import { fileChanges } from '../../src/adapters/sqlite/file-changes.ts';

const chunk = (seq: number, c: string): StepView => ({ seq, name: `stream:s#${seq + 1}`, kind: 'stream', status: 'succeeded', attempts: 1, result: { stream: 's', chunk: c } as never });
const close = (seq: number): StepView => ({ seq, name: `stream:s#${seq + 1}`, kind: 'stream', status: 'succeeded', attempts: 1, result: { stream: 's', closed: true } as never });
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
};

/** A run whose journal the test grows, counting the reads of it. */
function fakeRun() {
  const steps: StepView[] = [chunk(0, 'a')];
  let reads = 0;
  const view = async (runId: string): Promise<RunView> => (reads++, { runId, workflow: 'w', status: 'running', steps: [...steps] } as unknown as RunView);
  return { steps, view, reads: () => reads };
}

describe('waits of a reader that executes nothing', () => {
  it('woken by a change of the backend: idle, it reads the run no more; a write shows at once', async () => {
    const run = fakeRun();
    let wake: (() => void) | undefined;
    const api = liveOutputApi(run.view, new StepEvents(), (id) => id as string, { pollMs: 60_000, changes: (w) => ((wake = w), () => (wake = undefined)) });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const c of api.stream('r', 's')) got.push(c);
    })();
    await until(() => got.length === 1);
    const idle = run.reads();
    await new Promise((r) => setTimeout(r, 300));
    expect(run.reads()).toBe(idle);
    run.steps.push(chunk(1, 'b'));
    wake!();
    await until(() => got.length === 2);
    run.steps.push(close(2));
    wake!();
    await reading;
    expect(got).toEqual(['a', 'b']);
    // The reader stopped listening when it ended.
    expect(wake).toBeUndefined();
  });

  it("woken by a run's logged events (Restate's log): chunks come from them in order, without reading the run for each", async () => {
    const run = fakeRun();
    let deliver: ((e: StepEvent) => void) | undefined;
    const remote: RemoteStepEvents = { follow: (_id, _from, d) => ((deliver = d), () => (deliver = undefined)) };
    const hub = new StepEvents();
    hub.useRemote(remote);
    const api = liveOutputApi(run.view, hub, (id) => id as string, { pollMs: 60_000 });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const c of api.stream('r', 's')) got.push(c);
    })();
    await until(() => got.length === 1 && deliver !== undefined);
    const reads = run.reads();
    const ev = (type: StepEvent['type'], offset: number, c?: string): StepEvent => ({ type, runId: 'r', workflow: 'w', step: `stream:s#${offset + 1}`, kind: 'stream', at: 0, key: 's', offset, ...(c === undefined ? {} : { chunk: c }) });
    deliver!(ev('stream.chunk', 1, 'b'));
    deliver!(ev('stream.chunk', 2, 'c'));
    await until(() => got.length === 3);
    expect(run.reads()).toBe(reads);
    deliver!(ev('stream.closed', 3));
    await reading;
    expect(got).toEqual(['a', 'b', 'c']);
    expect(deliver).toBeUndefined();
  });
});

describe('SQLite file changes', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a commit to the data dir\'s file wakes the watcher; a file of another name does not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-changes-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'tranquil.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x INTEGER)');
    const other = new Database(join(dir, 'other.db'));
    other.exec('CREATE TABLE u (x INTEGER)');
    let woken = 0;
    const stop = fileChanges(dir)(() => void woken++);
    try {
      await new Promise((r) => setTimeout(r, 50));
      woken = 0;
      other.prepare('INSERT INTO u VALUES (1)').run();
      await new Promise((r) => setTimeout(r, 100));
      expect(woken).toBe(0);
      db.prepare('INSERT INTO t VALUES (1)').run();
      await until(() => woken > 0);
    } finally {
      stop();
      db.close();
      other.close();
    }
  });
});
