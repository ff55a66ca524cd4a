// Importing the engine leaves the host's globals as they were, and does not load what the
// engine loads lazily. Checked in a fresh child process per case: vitest's own process has
// globals of its own, and a module, once loaded, stays loaded.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CHILD = join(import.meta.dirname, 'fixtures', 'import-engine-child.ts');

interface ChildReport {
  output: unknown;
  sameReflectObject: boolean;
  reflectAdded: string[];
  reflectChanged: string[];
  hostMetadata?: unknown;
  globalsAdded: string[];
  loadedAtImport: string[];
}

const reports = new Map<string, ChildReport>();
/** One child per argument list, shared by the cases that read its report (each costs seconds). */
function child(...args: string[]): ChildReport {
  const key = args.join(' ');
  if (!reports.has(key)) reports.set(key, spawnChild(args));
  return reports.get(key)!;
}

function spawnChild(args: string[]): ChildReport {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`child ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as ChildReport;
}

// zod 4 (the sdk's validation library) keeps its config and schema registry on globalThis so
// that every copy of zod in a process shares them; a host using zod has them anyway. Removing
// them would break a host's `import 'zod/compile'` made after the engine (zod reads the config
// back through the global), so they are the one expected addition, named here.
const ZOD_SHARED_STATE = ['__zod_globalConfig', '__zod_globalRegistry'];

describe('importing the engine', () => {
  it.each(['', '/testing'])('@tranquil/engine%s: Reflect and the global object are unchanged after import, start, a run, stop', (entry) => {
    const r = child(entry === '' ? 'index' : 'testing');
    expect(r.output).toBe('hi');
    expect(r.sameReflectObject).toBe(true);
    expect(r.reflectAdded).toEqual([]);
    expect(r.reflectChanged).toEqual([]);
    expect(r.globalsAdded.filter((k) => !ZOD_SHARED_STATE.includes(k))).toEqual([]);
  });

  it('a host that loaded reflect-metadata itself keeps its functions and its metadata', () => {
    const r = child('index', 'host-reflect');
    expect(r.output).toBe('hi');
    expect(r.reflectAdded).toEqual([]);
    expect(r.reflectChanged).toEqual([]);
    expect(r.hostMetadata).toBe('host value');
  });

  it.each(['', '/testing'])('@tranquil/engine%s does not load cron-parser or luxon until a schedule needs them', (entry) => {
    expect(child(entry === '' ? 'index' : 'testing').loadedAtImport).toEqual([]);
  });
});
