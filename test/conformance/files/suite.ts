// The conformance suite through the Deno runner: ONE function each backend runs from a
// one-line test file (files-sqlite.test.ts, files-restate.test.ts). Every case is a case of
// the in-process suite (same name, same assertions) with its workflow as a file; the suite's
// cases that are not about workflow code (CLI, API argument checks, webhooks, paging) are
// listed in NOT_FOR_FILES with the reason, so the mapping stays visible.
import { afterEach, describe, it } from 'vitest';
import { Rigs, type Backend, type FlowRig } from './harness.ts';
import { coreFileScenarios } from './core.ts';
import { moreFileScenarios } from './more.ts';
import { triggerFileScenarios } from './triggers.ts';
import { portedFileScenarios } from './ported.ts';

export interface FileKit {
  backend: Backend;
  test(name: string, fn: () => Promise<void>, timeout?: number): void;
  /** A case that runs at the same time as its neighbours (it.concurrent): it must use no
   *  engine of `boot`, which is cleaned up after each case. */
  concurrent(name: string, fn: () => Promise<void>, timeout?: number): void;
  boot: Rigs['boot'];
}

/** In-process suite cases with no file form, and why (docs/runner.md, Conformance). */
export const NOT_FOR_FILES: Record<string, string> = {
  'bad engine calls get one clear error each': 'argument checks of the engine API: no workflow code involved',
  'stop() ends a pending result() with an error instead of leaving it waiting': 'an engine API behaviour, the same whatever runs the code',
  'runs.list pages with a cursor: every run once, newest first, `next` only while more match': 'paging of the run reader: no workflow code involved',
  'runs.list since/until: only runs created in the window, inclusive, paged': 'a filter of the run reader: no workflow code involved',
  'CLI runs list / describe / why say what the engine API says, while the engine runs': 'the CLI reads the same run views for both kinds of workflow',
  'after the engine stops, the CLI reads the file (sqlite) or says no restate-server is running (restate)': 'the CLI reads the same run views for both kinds of workflow',
  'an input, event or signal payload over the size limit is refused at the API and nothing is stored': 'checked at the engine API, before any code runs',
  'the size limit is engine config (maxPayloadBytes), the same for results and arguments': 'engine config; the file form of the result limit is ported',
  'notifications: run.succeeded, run.failed and run.retrying, each transition once': 'host-side notifications read run views, whatever ran the code',
  'notifications: after a restart the host gets what it missed, not what it already had': 'host-side notifications read run views, whatever ran the code',
  'why: sleeping, waiting, retrying, failed, cancelled and succeeded runs read the same on every backend': 'explanations read run views, whatever ran the code',
  'why: a run whose code changed under it names the position, the call and the record': 'explanations read run views; the file form of non-determinism is ported',
  'why: a cancelled run says who asked to cancel it and when': 'who asked is recorded at the engine API, whatever ran the code',
  'with a key configured no payload is stored in plain text (control: without one it is)': 'the payload codec sits in the backends\' storage, below the step log a child is served',
  'a rotated keyring reads runs the old key wrote; new writes use the new key': 'the payload codec sits in the backends\' storage, below the step log a child is served',
  'a missing or wrong key is refused in one line and changes nothing': 'checked at engine start, before any code runs',
  'replay check: an in-flight run passes against its code and is flagged against a reordered step': 'tranquil check replays code workflows in-process; files are checked by their snapshot',
  'plain: the reference definition skips an activated user and nudges one that is not, once, with key nudge/<run id>': 'plain-data workflows are data run in-process, not files',
  'plain: a transient mail failure twice, then success: three attempts, one key': 'plain-data workflows are data run in-process, not files',
  'plain: a declared non-retryable failure (HTTP 4xx) and a TerminalError each fail the run after one attempt': 'plain-data workflows are data run in-process, not files',
  'plain: a run waiting on v1 keeps v1 after a restart registers v2; new runs start on v2': 'plain-data workflows are data run in-process, not files',
  'capability: parks with no provider, explains why, survives a restart, resumes only on a matching provider': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: provider errors retry like step.do, a TerminalError is caught by the code, a withdrawn provider parks the run': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: cancelling a parked run throws CancelledError into the parked step (its cleanup runs); bad names are refused; a parked branch beside a wait resumes': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: a run failed in step.use is retried at that step; the provider is asked again': 'the retry point is chosen from the journal at the engine (domain/retry-point.ts) and providers are host-side, whatever ran the code',
  'a step called while another is in flight starts its body at once, also after the code awaited a plain timer': 'the file form is the race of two step.do (frames arrive in different turns)',
  '100 signals sent at once to a waiting run: each consumed once, in one order that replay keeps': 'ported with 20 signals (a child per replay makes 100 slow)',
};

/** In-process suite cases that apply to files and are not ported yet (issue 11). A test
 *  (coverage.test.ts) keeps every in-process case in one of the three lists. */
export const NOT_YET_PORTED: string[] = [
  // Flow control (issue 39): the Deno child's step log has no slot() yet.
  'queue: never more than concurrency bodies at once, in the queue and per key',
  'queue: the rate limit is never exceeded in any window',
  'queue: a cold key starts within one slot turnover of a hot key with many queued',
  'queue: a run holds no slot while it sleeps',
  'queue: bodies waiting for a slot survive a restart and run in their order',
  'queue: an unknown queue name or a key that is not a string fails the step, naming it',
  'queue: a run cancelled while its step waits for a slot leaves the line; its body never runs',
];

export function runFileConformance(backend: Backend, skip: { reason: string; tests: string[] }[] = []): void {
  const skipped = new Map<string, string>();
  for (const s of skip) for (const t of s.tests) skipped.set(t, s.reason);
  describe(`conformance through the runner: ${backend}`, () => {
    const rigs = new Rigs(backend);
    afterEach(() => rigs.cleanup());
    const test = (name: string, fn: () => Promise<void>, timeout = 90_000) => {
      const reason = skipped.get(name);
      if (reason) it.skip(`${name} [skipped: ${reason}]`, fn);
      else it(name, fn, timeout);
    };
    const concurrent = (name: string, fn: () => Promise<void>, timeout = 90_000) => {
      const reason = skipped.get(name);
      if (reason) it.skip(`${name} [skipped: ${reason}]`, fn);
      else it.concurrent(name, fn, timeout);
    };
    const kit: FileKit = { backend, test, concurrent, boot: (bodies, config) => rigs.boot(bodies, config) };
    coreFileScenarios(kit);
    moreFileScenarios(kit);
    triggerFileScenarios(kit);
    portedFileScenarios(kit);
  });
}

export type { FlowRig };
