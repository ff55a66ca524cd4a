// The layering rules of docs/architecture.md, enforced: every .ts file under src/, sdk/,
// compose/ and cli/ is scanned for its module specifiers (static imports, `export ... from`,
// `import(...)` and `import('...')` types, via TypeScript's own pre-processor, so comments and
// strings never count), relative ones are resolved to a layer, and each is checked against the
// rule table below. A failure names the file, the line and the import. No allow-list: a
// violation is fixed in the code, or the rule is changed here on purpose.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..');
const SCANNED = ['src', 'sdk', 'compose', 'cli', 'runner'];

// ---- layers -------------------------------------------------------------------------------

/** A project layer, or for adapters `adapter:<folder>`. */
type Layer = 'domain' | 'ports' | 'runtime' | 'platform' | 'sdk' | 'compose' | 'cli' | 'runner' | `adapter:${string}`;

/** The layer a repo-relative posix path belongs to; undefined outside every layer. */
function layerOf(path: string): Layer | undefined {
  const [top, second, third] = path.split('/');
  if (top === 'sdk' || top === 'compose' || top === 'cli' || top === 'runner') return top;
  if (top !== 'src') return undefined;
  if (second === 'domain' || second === 'ports' || second === 'runtime' || second === 'platform') return second;
  if (second === 'adapters' && third !== undefined && path.split('/').length > 3) return `adapter:${third}`;
  return undefined;
}

/** Package names that are the project itself (package self-reference and the sdk workspace). */
const SELF_PACKAGES: Record<string, string> = {
  '@tranquil/sdk': 'sdk/index.ts',
  '@tranquil/engine': 'compose/index.ts',
  '@tranquil/engine/testing': 'compose/testing.ts',
};

// ---- the rule table -------------------------------------------------------------------------

/** Node built-ins and packages that do I/O: never in the pure or application layers. */
const IO_MODULES = [
  'node:fs', 'node:fs/promises', 'node:child_process', 'node:net', 'node:http', 'node:https', 'node:http2',
  'node:dgram', 'node:dns', 'node:tls', 'node:worker_threads', 'node:cluster', 'node:os', 'node:process',
  'better-sqlite3', '@restatedev/restate-sdk', '@restatedev/restate-sdk-clients', '@restatedev/restate-server',
  'hono', '@hono/node-server', 'commander',
];
/** What domain and ports may import from outside the project: pure computation only. */
// devalue: the value codec's encoding (src/domain/value-codec.ts), pure computation.
const PURE_MODULES = ['node:util', 'node:assert', 'node:path', 'node:url', 'node:buffer', 'node:string_decoder', 'zod', '@noble/hashes', 'devalue'];

interface Rule {
  /** Whose imports this rule governs. */
  layer: Layer | 'adapter';
  /** Project layers it may import ('own-adapter': files of its own adapter folder). */
  projectLayers: readonly (Layer | 'adapter' | 'own-adapter')[];
  /** Outside the project: only these (undefined: any but `forbiddenModules`). */
  allowedModules?: readonly string[];
  forbiddenModules?: readonly string[];
  why: string;
}

const RULES: readonly Rule[] = [
  { layer: 'domain', projectLayers: ['domain'], allowedModules: PURE_MODULES, why: 'src/domain is pure: it imports nothing outside src/domain/ and no I/O' },
  { layer: 'ports', projectLayers: ['ports', 'domain'], allowedModules: PURE_MODULES, why: 'src/ports holds interfaces: it imports only src/domain/' },
  { layer: 'runtime', projectLayers: ['runtime', 'domain', 'ports', 'sdk'], forbiddenModules: IO_MODULES, why: 'the application layer (src/runtime) imports only src/domain/, src/ports/ and sdk/, and does no I/O of its own' },
  { layer: 'platform', projectLayers: ['platform'], why: 'src/platform (OS helpers with no port, e.g. processes by PID) imports nothing else from the project' },
  { layer: 'adapter', projectLayers: ['own-adapter', 'domain', 'ports', 'runtime', 'platform', 'sdk'], why: 'an adapter imports domain, ports, runtime, platform, sdk and its own folder, never another adapter, compose/ or cli/' },
  { layer: 'sdk', projectLayers: ['sdk', 'domain'], forbiddenModules: IO_MODULES, why: 'sdk/ imports nothing from the project outside sdk/ except src/domain/' },
  { layer: 'compose', projectLayers: ['compose', 'domain', 'ports', 'runtime', 'platform', 'sdk', 'adapter'], why: 'compose/ may import every layer but cli/' },
  // The Deno child: it runs inside the sandbox, so it gets the pure core and the shared
  // RunSession, never an adapter (no engine I/O), compose/ or cli/, and no Node I/O module.
  { layer: 'runner', projectLayers: ['runner', 'domain', 'ports', 'runtime', 'sdk'], forbiddenModules: IO_MODULES, why: 'runner/ (the Deno child) imports only runner/, src/domain/, src/ports/, src/runtime/ and sdk/, never an adapter, and no Node I/O module' },
  { layer: 'cli', projectLayers: ['cli', 'compose', 'domain', 'ports', 'runtime', 'platform', 'sdk', 'adapter'], why: 'cli/ may import every layer' },
];

/** Modules only one file may import: the guard around inversify (compose/reflect-shield.ts). */
const SOLE_IMPORTERS: Record<string, string> = { inversify: 'compose/inversify.ts', 'reflect-metadata': '(none)', 'reflect-metadata/lite': '(none)' };

// ---- the checker ------------------------------------------------------------------------------

interface SourceFile {
  /** Repo-relative, posix separators. */
  path: string;
  text: string;
}

interface Violation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}

/** The package a bare specifier names ('@scope/name/x' -> '@scope/name'); built-ins as 'node:x'. */
function moduleName(spec: string): string {
  const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
  if (builtinModules.includes(bare) || builtinModules.includes(bare.split('/')[0]!)) return `node:${bare}`;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function ruleFor(layer: Layer): Rule {
  const key = layer.startsWith('adapter:') ? 'adapter' : layer;
  return RULES.find((r) => r.layer === key)!;
}

function checkImports(files: readonly SourceFile[]): Violation[] {
  const out: Violation[] = [];
  for (const f of files) {
    const from = layerOf(f.path);
    const lineOf = (pos: number) => f.text.slice(0, pos).split('\n').length;
    if (!from) {
      out.push({ file: f.path, line: 1, specifier: '', message: 'is in no layer (src/domain, src/ports, src/runtime, src/platform, src/adapters/<name>, sdk, compose, cli, runner)' });
      continue;
    }
    const rule = ruleFor(from);
    for (const imp of ts.preProcessFile(f.text, true, true).importedFiles) {
      const spec = imp.fileName;
      const fail = (message: string) => out.push({ file: f.path, line: lineOf(imp.pos), specifier: spec, message });
      const self = SELF_PACKAGES[spec];
      if (spec.startsWith('.') || self) {
        const target = self ?? posix.normalize(posix.join(posix.dirname(f.path), spec));
        const to = layerOf(target);
        const ok =
          to !== undefined &&
          (rule.projectLayers.includes(to) ||
            (to.startsWith('adapter:') && rule.projectLayers.includes('adapter')) ||
            (to === from && to.startsWith('adapter:') && rule.projectLayers.includes('own-adapter')));
        if (!ok) fail(`imports ${target} (${to ?? 'outside every layer'}): ${rule.why}`);
        continue;
      }
      const mod = moduleName(spec);
      const sole = SOLE_IMPORTERS[spec] ?? SOLE_IMPORTERS[mod];
      if (sole !== undefined && sole !== f.path) fail(`imports ${spec}: only ${sole} may (it keeps the host's Reflect untouched)`);
      if (rule.allowedModules && !rule.allowedModules.includes(mod)) fail(`imports ${mod}: ${rule.why} (allowed from outside the project: ${rule.allowedModules.join(', ')})`);
      if (rule.forbiddenModules?.includes(mod)) fail(`imports ${mod}, which does I/O: ${rule.why}`);
    }
  }
  return out;
}

function projectFiles(): SourceFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  return SCANNED.flatMap((d) => walk(join(REPO, d))).map((abs) => ({
    path: relative(REPO, abs).split(sep).join('/'),
    text: readFileSync(abs, 'utf8'),
  }));
}

const show = (vs: readonly Violation[]) => vs.map((v) => `${v.file}:${v.line} '${v.specifier}' ${v.message}`).join('\n');

// ---- tests ------------------------------------------------------------------------------------

describe('architecture: imports follow the layers', () => {
  it('the project has no forbidden import', () => {
    const files = projectFiles();
    expect(files.length).toBeGreaterThan(50); // the scan found the sources
    const violations = checkImports(files);
    expect(violations, `forbidden imports:\n${show(violations)}`).toEqual([]);
  });

  it('the checker fails on planted forbidden imports, naming file and import', () => {
    const planted: [SourceFile, RegExp][] = [
      [{ path: 'src/adapters/restate/x.ts', text: "import { SqliteStore } from '../sqlite/store.ts';" }, /src\/adapters\/sqlite\/store\.ts \(adapter:sqlite\)/],
      [{ path: 'src/domain/y.ts', text: "import { readFileSync } from 'node:fs';" }, /imports node:fs/],
      [{ path: 'src/domain/z.ts', text: "import type { StepLog } from '../ports/step-log.ts';" }, /src\/ports\/step-log\.ts \(ports\)/],
      [{ path: 'src/domain/w.ts', text: "import Database from 'better-sqlite3';" }, /imports better-sqlite3/],
      [{ path: 'src/ports/p.ts', text: "export type { Engine } from '../runtime/engine.ts';" }, /src\/runtime\/engine\.ts \(runtime\)/],
      [{ path: 'src/runtime/r.ts', text: "const m = await import('../adapters/sqlite/executor.ts');" }, /src\/adapters\/sqlite\/executor\.ts \(adapter:sqlite\)/],
      [{ path: 'src/runtime/s.ts', text: "import { spawn } from 'node:child_process';" }, /node:child_process, which does I\/O/],
      [{ path: 'src/adapters/sqlite/c.ts', text: "import { TOKENS } from '../../../compose/container.ts';" }, /compose\/container\.ts \(compose\)/],
      [{ path: 'sdk/q.ts', text: "import { SystemClock } from '../src/adapters/clock/system-clock.ts';" }, /\(adapter:clock\)/],
      [{ path: 'sdk/u.ts', text: "import { Engine } from '@tranquil/engine';" }, /compose\/index\.ts \(compose\)/],
      [{ path: 'src/runtime/t.ts', text: "import { RunSession } from './run-session.ts';\nimport { program } from '../../cli/program.ts';" }, /cli\/program\.ts \(cli\)/],
      [{ path: 'compose/k.ts', text: "import { Container } from 'inversify';" }, /only compose\/inversify\.ts may/],
      [{ path: 'src/misc.ts', text: '' }, /is in no layer/],
      [{ path: 'runner/x.ts', text: "import { SqliteStore } from '../src/adapters/sqlite/store.ts';" }, /\(adapter:sqlite\)/],
      [{ path: 'runner/y.ts', text: "import { connect } from 'node:net';" }, /node:net, which does I\/O/],
      [{ path: 'src/adapters/deno/z.ts', text: "import { WireLog } from '../../../runner/wire-log.ts';" }, /runner\/wire-log\.ts \(runner\)/],
    ];
    for (const [file, expected] of planted) {
      const vs = checkImports([file]);
      expect(vs, `${file.path} should fail`).toHaveLength(1);
      expect(show(vs)).toContain(file.path);
      expect(show(vs)).toMatch(expected);
    }
    expect(checkImports([{ path: 'src/runtime/t.ts', text: "import { x } from '../../cli/program.ts';\n\nimport { y } from '../adapters/http/listen.ts';" }]).map((v) => v.line)).toEqual([1, 3]);
  });

  it('the checker accepts what the layers allow', () => {
    const allowed: SourceFile[] = [
      { path: 'src/domain/a.ts', text: "import { z } from 'zod';\nimport { inspect } from 'node:util';\nimport type { Json } from './json.ts';" },
      { path: 'src/ports/b.ts', text: "import type { RunView } from '../domain/run-view.ts';" },
      { path: 'src/runtime/c.ts', text: "import { randomUUID } from 'node:crypto';\nimport type { StepLog } from '../ports/step-log.ts';\nimport { workflow } from '../../sdk/workflow.ts';" },
      { path: 'src/adapters/sqlite/d.ts', text: "import Database from 'better-sqlite3';\nimport { CommitQueue } from './commit-queue.ts';\nimport { RunSession } from '../../runtime/run-session.ts';\n// import { x } from '../restate/y.ts';" },
      { path: 'sdk/e.ts', text: "import { ValidationError } from '../src/domain/errors.ts';\ntype P = typeof import('cron-parser');" },
      { path: 'compose/f.ts', text: "const r = await import('../src/adapters/restate/executor.ts');" },
      { path: 'runner/h.ts', text: "import { RunSession } from '../src/runtime/run-session.ts';\nimport { z } from 'zod';\nimport type { StepLog } from '../src/ports/step-log.ts';" },
      { path: 'cli/g.ts', text: "import { createEngine } from '../compose/index.ts';\nimport Database from 'better-sqlite3';" },
    ];
    expect(show(checkImports(allowed))).toBe('');
  });
});
