// The last line of a test run: every group of tests that was skipped, with why, and the one
// command that installs the system packages the skipped groups need. A run that skips the
// browser or multi-host tests still ends green; this line keeps that from reading as "all
// tested". Added next to the default reporter in vitest.config.ts.
import type { Reporter, TestCase, TestModule, TestSuite, Vitest } from 'vitest/node';
import { INSTALL_COMMAND } from '../needs.ts';

export interface SkippedGroup {
  /** The file, or the suite or test inside it, that was skipped as a whole. */
  label: string;
  tests: number;
  /** How many tests the group has, when only some were skipped. */
  of?: number;
  /** Why, as the test says it; undefined when it does not. */
  reason: string | undefined;
  /** System packages its tests need that are missing here. */
  missing: string[];
}

/** The reason a skipped test or suite gives in its name (`[skipped: why]`, `(skipped: why)`),
 *  and the name without it. */
export function splitReason(name: string): { name: string; reason: string | undefined } {
  const m = /\s*[[(]skipped(?::| when)?\s*(.*)[\])]\s*$/i.exec(name);
  return m ? { name: name.slice(0, m.index), reason: m[1]!.trim() || undefined } : { name, reason: undefined };
}

/** One line, or undefined when nothing was skipped. */
export function summaryLine(groups: SkippedGroup[], installCommand = INSTALL_COMMAND): string | undefined {
  if (groups.length === 0) return undefined;
  const total = groups.reduce((n, g) => n + g.tests, 0);
  const parts = groups.map((g) => {
    const why = g.reason ?? (g.missing.length ? `needs ${g.missing.join(', ')}` : undefined);
    const count = g.of === undefined ? `${g.tests} ${g.tests === 1 ? 'test' : 'tests'}` : `${g.tests} of ${g.of} tests`;
    return `${g.label} (${count}${why ? `: ${why}` : ''})`;
  });
  const missing = [...new Set(groups.flatMap((g) => g.missing))].sort();
  const install = missing.length ? ` To run the ones that need ${missing.join(', ')}: ${installCommand}, then run them again.` : '';
  return `Skipped ${total} ${total === 1 ? 'test' : 'tests'} in ${groups.length} ${groups.length === 1 ? 'group' : 'groups'}: ${parts.join('; ')}.${install}`;
}

type Node = TestModule | TestSuite;

function allSkipped(node: Node): boolean {
  let any = false;
  for (const t of node.children.allTests()) {
    if (t.result().state !== 'skipped') return false;
    any = true;
  }
  return any;
}

/** The largest enclosing suite (or the whole file) whose tests were all skipped; when only
 *  some of its suite's tests were, that suite, with partial set. */
function groupOf(test: TestCase): { node: Node; partial: boolean } {
  if (!allSkipped(test.parent)) return { node: test.parent, partial: true };
  let node: Node = test.parent;
  while (node.type === 'suite' && allSkipped(node.parent)) node = node.parent;
  return { node, partial: false };
}

/** Why a test was skipped: its ctx.skip() note, else what its name or a suite's name says. */
function reasonOf(test: TestCase): string | undefined {
  const r = test.result();
  if (r.state === 'skipped' && r.note) return r.note;
  for (let node: TestCase | Node = test; node.type !== 'module'; node = node.parent) {
    const { reason } = splitReason(node.name);
    if (reason) return reason;
  }
  return undefined;
}

const labelOf = (node: Node) => (node.type === 'module' ? node.relativeModuleId : `${node.module.relativeModuleId} > ${splitReason(node.fullName).name}`);

/** Skipped tests of the run, grouped by where they are and why. A run filtered by name (-t)
 *  or with .only skips the rest on purpose: those are not reported. */
export function skippedGroups(modules: ReadonlyArray<TestModule>): SkippedGroup[] {
  const groups = new Map<string, SkippedGroup>();
  for (const m of modules) {
    const tests = [...m.children.allTests()];
    if (tests.some((t) => t.options.mode === 'only')) continue;
    for (const t of tests) {
      if (t.result().state !== 'skipped') continue;
      const { node, partial } = groupOf(t);
      const reason = reasonOf(t);
      const key = `${node.id}\0${partial ? reason : ''}`;
      const g = groups.get(key) ?? { label: labelOf(node), tests: 0, of: partial ? [...node.children.allTests()].length : undefined, reason: undefined, missing: [] };
      g.tests++;
      if (reason && !(g.reason ?? '').split(' / ').includes(reason)) g.reason = g.reason ? `${g.reason} / ${reason}` : reason;
      for (const p of t.meta().missingPackages ?? []) if (!g.missing.includes(p)) g.missing.push(p);
      groups.set(key, g);
    }
  }
  return [...groups.values()];
}

export default class SkippedSummaryReporter implements Reporter {
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.filtered = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (this.filtered) return;
    const line = summaryLine(skippedGroups(modules));
    if (line) process.stdout.write(`\n${line}\n`);
  }
}
