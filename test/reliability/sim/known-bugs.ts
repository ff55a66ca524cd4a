// Engine bugs the simulation found with concurrent branches (issue 18), each as the smallest
// workflow that shows it on a test engine (SQLite, manual clock). Run them all:
//   npx tsx test/reliability/sim/known-bugs.ts        (or one: ... known-bugs.ts order-of-delivery)
// Each prints "present" with what it saw, or "fixed". The CI slice of the simulation skips
// the seeds these bugs fail (known-failures.ts) until they are fixed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestEngine, type TestEngine } from '../../../compose/testing.ts';
import { manual, workflow, type WorkflowDefinition } from '../../../sdk/index.ts';
import type { WorkflowFn } from '../../../sdk/types.ts';

const turn = () => new Promise<void>((r) => setImmediate(r));

interface Got {
  status: string;
  output?: unknown;
  steps: string[];
  /** Recorded results by unique step name. */
  results: Record<string, unknown>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const consistent = (g: Got) => g.status === 'succeeded' && same((g.output as { first?: unknown })?.first, (g.output as { seen?: unknown })?.seen);

interface KnownBug {
  summary: string;
  fn: WorkflowFn;
  /** Drives the run (default: advance the clock 2 minutes). */
  drive?: (t: TestEngine, runId: string) => Promise<void>;
  /** What a correct engine gives, said and checked on the run after `advance`. */
  expect: string;
  ok(got: Got): boolean;
}

const KNOWN_BUGS: Record<string, KnownBug> = {
  'no-suspend-after-release': {
    summary:
      'A session that hands back a replayed result while another branch stays blocked never suspends: the run stays ' +
      "'running' and the engine never becomes idle. RunSession.checkQuiescent's deferred check returns when activity " +
      'changed, and the release (markReleased/releaseNext) never checks again.',
    fn: async ({ step }) => (await Promise.all([step.sleep('long', '1m'), step.sleep('short', 1)]), 'done'),
    expect: "succeeded with 'done'",
    ok: (g) => g.status === 'succeeded' && g.output === 'done',
  },
  'order-of-delivery': {
    summary:
      'Results committed in one batch reach the workflow code in promise-depth order, not in their recorded ' +
      'completion order (JournalEntry.order): on first execution `b` wins this race, on replay `a` (recorded first) ' +
      'does, so the run returns first "A" next to the "B" it recorded.',
    fn: async ({ step }) => {
      const first = await Promise.race([step.do('a', () => 'A').then((v) => v), step.do('b', () => 'B')]);
      const seen = await step.do('winner', () => first);
      await step.sleep('replay', 1000);
      return { first, seen };
    },
    expect: 'first === seen (the winner the code saw is the one replay picks)',
    ok: consistent,
  },
  'wait-timeout-order': {
    summary:
      "A wait that times out keeps the completion order it took at its first look (waitStep takes it before " +
      'takeSignal), so it is recorded as completing before a step that completed, and reached the code, earlier: ' +
      'Promise.all rejects with the step error on first execution, with the TimeoutError on replay.',
    fn: async ({ step }) => {
      let first: string;
      try {
        await Promise.all([
          step.waitForEvent('go', { timeout: 0 }),
          step.do('bad', { retries: { limit: 1 } }, () => {
            throw new Error('bad');
          }),
        ]);
        first = 'none';
      } catch (e) {
        first = (e as Error).name;
      }
      const seen = await step.do('seen', () => first);
      await step.sleep('replay', 1000);
      return { first, seen };
    },
    expect: 'first === seen (the rejection the code saw is the one replay picks)',
    ok: consistent,
  },
  'drain-drops-calls': {
    summary:
      "A step called by a race's losing chain after the workflow function returned, while the run drains its steps " +
      'in flight, is dropped: its position is taken, its body never runs, nothing is recorded, the run succeeds. ' +
      'Whether it runs depends on timing, so a replay can diverge (NonDeterminismError "code now calls the run to ' +
      'finish, journal recorded do ...") when the first execution did record it.',
    fn: async ({ step }) =>
      Promise.race([
        (async () => {
          await step.do('a', async () => {
            for (let i = 0; i < 5; i++) await turn();
            return 'a';
          });
          await step.do('b', () => 'b');
          return 'chain';
        })(),
        step.do('fast', () => 'fast'),
      ]),
    expect: "succeeded with 'fast', and b ran once and is recorded",
    ok: (g) => g.status === 'succeeded' && g.output === 'fast' && g.steps.includes('b:succeeded'),
  },
  'cleanup-wait-cancelled-later': {
    summary:
      'A cleanup waitForEvent (called after the cancel was delivered) got a CancelledError in the next execution: ' +
      "RunSession's cancelSeq (steps below it were called before the delivery) was Infinity in a session after the one " +
      'that delivered the cancel, so a wait that looked in vain counted as one the cancel reached. Issues 46/47 (seeds ' +
      "922488, 943373: that CancelledError then reached the code ahead of recorded results the gate still held, and " +
      "the code called its next steps in another order; test/unit/repeated-names-order.test.ts has both).",
    fn: async ({ step }) => {
      try {
        await step.sleep('long', '1d');
        return 'not cancelled';
      } catch (err) {
        const [ack] = await Promise.all([step.waitForEvent<string>('ack'), step.sleep('settle', 1000)]);
        await step.do('undo', () => `undone after ${ack}`);
        throw err;
      }
    },
    drive: async (t, runId) => {
      await t.idle();
      await t.engine.runs.cancel(runId);
      await t.idle();
      await t.advance('2s'); // the next execution: 'settle' is due, 'ack' looks again
      await t.engine.signal(runId, 'ack', 'ok').catch(() => {});
      await t.idle();
    },
    expect: "cancelled, 'ack' got its signal and 'undo' ran",
    ok: (g) => g.status === 'cancelled' && g.results.ack === 'ok' && g.results.undo === 'undone after ok',
  },
  'idle-misses-queue': {
    summary:
      'SqliteExecutor.idle() (TestEngine.idle/advance) never returns when the last thing keeping it busy is a queued ' +
      'write no run execution follows (a cancel of a suspended run not awaited yet; in the simulation, the late write ' +
      'of a step a finished session left running): resolveIdle is only called when an execute() ends.',
    fn: async ({ step }) => step.sleep('nap', '1h'),
    drive: async (t, runId) => {
      await t.idle();
      const cancel = t.engine.runs.cancel(runId); // its write is queued when idle() looks
      await t.idle();
      await cancel;
    },
    expect: "idle() returns; the run is 'cancelled'",
    ok: (g) => g.status === 'cancelled',
  },
};

async function check(id: string, bug: KnownBug): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), `known-bug-${id}-`));
  const wf: WorkflowDefinition = workflow(id, (w) => {
    w.trigger(manual());
    w.run(bug.fn);
  });
  const t = await createTestEngine({ dataDir, workflows: [wf] });
  try {
    const { runId } = await t.engine.trigger(id, null);
    const driven = bug.drive ? bug.drive(t, runId) : t.advance('2m');
    const settled = await Promise.race([driven.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 3000))]);
    const view = await t.engine.runs.get(runId);
    const got: Got = { status: view.status, output: view.output, steps: view.steps.map((s) => `${s.name}:${s.status}`), results: Object.fromEntries(view.steps.map((s) => [s.name, s.result])) };
    const ok = settled && bug.ok(got);
    console.log(`${ok ? 'fixed  ' : 'present'} ${id}${ok ? '' : `: expected ${bug.expect}, got ${JSON.stringify(got)}${settled ? '' : ' (engine still busy after 3 s)'}`}`);
    if (!ok) console.log(`        ${bug.summary}`);
    return ok;
  } finally {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const only = process.argv[2];
let present = 0;
for (const [id, bug] of Object.entries(KNOWN_BUGS)) if (!only || only === id) present += (await check(id, bug)) ? 0 : 1;
process.exit(present ? 1 : 0);
