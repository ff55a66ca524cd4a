// Issue 45: a test run that skipped the browser or multi-host tests ends with one line naming
// every skipped group and the command that installs what they need, so a green run on a
// machine without chromium is not read as "the panel was tested".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram, SYSTEM_PACKAGES } from '../needs.ts';
import { splitReason, summaryLine } from './skipped-summary.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const empty = mkdtempSync(join(tmpdir(), 'tranquil-empty-path-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('the summary line', () => {
  it('names each group with its count and reason, then the one install command for the missing packages', () => {
    expect(summaryLine([
      { label: 'test/e2e/panel.test.ts', tests: 2, reason: 'chromium not installed', missing: ['chromium'] },
      { label: 'test/cluster/cluster.test.ts', tests: 5, reason: undefined, missing: ['haproxy'] },
      { label: 'test/restate/shared-triggers.test.ts > triggers kept in Restate', tests: 6, of: 9, reason: 'runs with TRANQUIL_RESTATE_LONG=1', missing: [] },
      { label: 'test/a.test.ts > one', tests: 1, reason: undefined, missing: [] },
    ], 'scripts/install-test-deps.sh')).toBe(
      'Skipped 14 tests in 4 groups: test/e2e/panel.test.ts (2 tests: chromium not installed); test/cluster/cluster.test.ts (5 tests: needs haproxy); '
        + 'test/restate/shared-triggers.test.ts > triggers kept in Restate (6 of 9 tests: runs with TRANQUIL_RESTATE_LONG=1); test/a.test.ts > one (1 test). '
        + 'To run the ones that need chromium, haproxy: scripts/install-test-deps.sh, then run them again.',
    );
  });

  it('has no install command when nothing skipped needs a package, and is absent when nothing was skipped', () => {
    expect(summaryLine([{ label: 'test/p.test.ts', tests: 1, reason: 'runs with X=1', missing: [] }])).toBe('Skipped 1 test in 1 group: test/p.test.ts (1 test: runs with X=1).');
    expect(summaryLine([])).toBeUndefined();
  });

  it('reads the reason a name gives in the forms the suite uses', () => {
    expect(splitReason('Runs panel [skipped: chromium not installed]')).toEqual({ name: 'Runs panel', reason: 'chromium not installed' });
    expect(splitReason('cluster (skipped: haproxy not installed (see docs))')).toEqual({ name: 'cluster', reason: 'haproxy not installed (see docs)' });
    expect(splitReason('panel [skipped when /usr/bin/chromium is missing]')).toEqual({ name: 'panel', reason: '/usr/bin/chromium is missing' });
    expect(splitReason('plain name (with parentheses)')).toEqual({ name: 'plain name (with parentheses)', reason: undefined });
  });
});

describe('the package list', () => {
  it('test/needs.ts names the same packages and programs as scripts/install-test-deps.sh', () => {
    const r = spawnSync('bash', [join(ROOT, 'scripts/install-test-deps.sh'), '--list'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => l.split(' '))).toEqual(Object.entries(SYSTEM_PACKAGES));
  });
});

it('a real vitest run with the project config and a PATH lacking chromium ends with the line naming the skipped groups and the install command', () => {
  // Only if chromium is not in an sbin dir, which the lookup also searches.
  expect(findProgram('chromium', empty)).toBeUndefined();
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/reporter/fixtures/vitest.config.ts'], {
    cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATH: empty, CI: '1', NO_COLOR: '1' },
  });
  expect(r.status, r.stderr + r.stdout).toBe(0);
  const lines = r.stdout.trim().split('\n');
  const file = 'test/reporter/fixtures/skips.fixture.ts';
  expect(lines.at(-1)).toBe(
    `Skipped 5 tests in 3 groups: ${file} > browser group (2 tests: chromium not installed); ${file} > mixed (2 of 4 tests: runs with LONG=1); `
      + `${file} > mixed (1 of 4 tests: no user systemd here). To run the ones that need chromium: scripts/install-test-deps.sh, then run them again.`,
  );
}, 60_000);
