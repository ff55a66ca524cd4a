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

export interface FileKit {
  test(name: string, fn: () => Promise<void>, timeout?: number): void;
  boot: Rigs['boot'];
}

/** In-process suite cases with no file form, and why (docs/runner.md, Conformance). */
export const NOT_FOR_FILES: Record<string, string> = {
  'bad engine calls get one clear error each': 'argument checks of the engine API: no workflow code involved',
  'stop() ends a pending result() with an error instead of leaving it waiting': 'an engine API behaviour, the same whatever runs the code',
  'runs.list pages with a cursor: every run once, newest first, `next` only while more match': 'paging of the run reader: no workflow code involved',
  'CLI runs list / describe / why say what the engine API says, while the engine runs': 'the CLI reads the same run views for both kinds of workflow',
  'after the engine stops, the CLI reads the file (sqlite) or says no restate-server is running (restate)': 'the CLI reads the same run views for both kinds of workflow',
};

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
    const kit: FileKit = { test, boot: (bodies, config) => rigs.boot(bodies, config) };
    coreFileScenarios(kit);
    moreFileScenarios(kit);
    triggerFileScenarios(kit);
  });
}

export type { FlowRig };
