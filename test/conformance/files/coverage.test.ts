// Every case of the in-process conformance suite is accounted for in the suite through the
// runner: ported (a case of the same name under files/), not meaningful for files (with the
// reason), or not ported yet (listed, so the gap is visible). A new in-process case must be
// placed in one of them; a listed name that no longer exists must go.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_FOR_FILES, NOT_YET_PORTED } from './suite.ts';

const names = (dir: string) =>
  readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).flatMap((f) =>
    [...readFileSync(join(dir, f), 'utf8').matchAll(/\b(?:test|concurrent)\('((?:[^'\\]|\\.)*)'/g)].map((m) => m[1]!.replace(/\\'/g, "'")),
  );

describe('conformance through the runner: coverage of the in-process suite', () => {
  const inProcess = new Set(names(join(import.meta.dirname, '..')));
  const ported = new Set(names(import.meta.dirname));

  it('every in-process case is ported, not meaningful for files (with a reason), or listed as not ported yet', () => {
    const unplaced = [...inProcess].filter((n) => !ported.has(n) && !(n in NOT_FOR_FILES) && !NOT_YET_PORTED.includes(n));
    expect(unplaced).toEqual([]);
  });

  it('the lists name only cases that exist and are not ported', () => {
    const listed = [...Object.keys(NOT_FOR_FILES), ...NOT_YET_PORTED];
    expect(listed.filter((n) => !inProcess.has(n))).toEqual([]);
    expect(listed.filter((n) => ported.has(n))).toEqual([]);
    expect(Object.values(NOT_FOR_FILES).every((reason) => reason.length > 10)).toBe(true);
  });
});
