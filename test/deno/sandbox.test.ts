// The sandbox of workflow files holds (issue 36): every file here is written as a hostile
// author would, approved with NO grants, and each attack class of the issue's table is
// refused by each layer on its own: the snapshot's scan of local imports (local-imports.ts),
// Deno's own resolver over the snapshot's module graph (module-graph.ts), Deno's permission
// checks for computed specifiers, and the step protocol that trusts only the session.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../compose/index.ts';
import { localClosure } from '../../src/adapters/deno/local-imports.ts';
import { checkModuleGraph, type GraphContext } from '../../src/adapters/deno/module-graph.ts';
import { findDeno } from '../../src/adapters/deno/binary.ts';
import { writeImportMap, childPackageDirs } from '../../src/adapters/deno/snapshot.ts';
import { describeFlags, moduleFlags } from '../../src/domain/permissions.ts';
import { childCommand, detectConfinement, engineDirs, type Confinement } from '../../src/adapters/deno/confine.ts';
import { DenoRunner } from '../../src/adapters/deno/deno-runner.ts';
import { DenoChild } from '../../src/adapters/deno/child-process.ts';
import { describeApproval } from '../../cli/ops.ts';
import { execFileSync } from 'node:child_process';
import { hostileFiles } from './sandbox-files.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tranquil-sandbox-'));
  dirs.push(d);
  return d;
};

/** A project with secrets next to (and above) the workflow dir `flows/`. */
function project() {
  const root = tempDir();
  mkdirSync(join(root, 'secret'));
  mkdirSync(join(root, 'flows'));
  writeFileSync(join(root, 'secret', 'id_rsa'), 'PRIVATE-KEY-MATERIAL\n', { mode: 0o600 });
  writeFileSync(join(root, 'secret', 'serve.json'), '{"token":"CONTROL-TOKEN"}\n', { mode: 0o600 });
  return { root, flows: join(root, 'flows'), secret: join(root, 'secret') };
}

describe('layer: the snapshot copies only the workflow directory (local-imports.ts)', () => {
  it('refuses a relative import leaving the directory, naming the path, and never reads it', () => {
    const p = project();
    const file = join(p.flows, 'up.ts');
    writeFileSync(file, `import k from '../secret/id_rsa' with { type: 'text' };\nexport default k;\n`);
    expect(() => localClosure(file)).toThrow(`imports '../secret/id_rsa', which resolves to ${join(p.secret, 'id_rsa')}, outside the workflow's directory ${p.flows}`);
  });

  it("refuses an absolute import written with escapes ('\\u002f')", () => {
    const p = project();
    const file = join(p.flows, 'esc.ts');
    const escaped = join(p.secret, 'id_rsa').replaceAll('/', '\\u002f');
    writeFileSync(file, `export default (await import('${escaped}', { with: { type: 'text' } })).default;\n`);
    expect(() => localClosure(file)).toThrow(`imports '${join(p.secret, 'id_rsa')}' by absolute path`);
  });

  it('refuses a symlink in the directory that points out of it, naming its target', () => {
    const p = project();
    symlinkSync(join(p.secret, 'id_rsa'), join(p.flows, 'key.txt'));
    symlinkSync(p.secret, join(p.flows, 'inner'));
    const a = join(p.flows, 'a.ts');
    writeFileSync(a, `import k from './key.txt' with { type: 'text' };\nexport default k;\n`);
    expect(() => localClosure(a)).toThrow(`imports './key.txt', a symlink to ${join(p.secret, 'id_rsa')}, outside the workflow's directory`);
    const b = join(p.flows, 'b.ts');
    writeFileSync(b, `import k from './inner/serve.json' with { type: 'json' };\nexport default k;\n`);
    expect(() => localClosure(b)).toThrow(`a symlink to ${join(p.secret, 'serve.json')}`);
  });
});

describe("layer: the module graph, resolved by Deno's own resolver (module-graph.ts)", () => {
  // Snapshots written by hand (as an older engine or a bypassed scan would leave them), so
  // that this layer is shown to hold on its own.
  const data = tempDir();
  const importMap = writeImportMap(data);
  const ctx: GraphContext = { binary: findDeno(), flags: moduleFlags(importMap), env: { DENO_DIR: join(data, 'deno-dir'), NO_COLOR: '1' }, trustedDirs: childPackageDirs() };
  const snapshotOf = (main: string, extra: Record<string, string> = {}) => {
    const dir = join(tempDir(), 'snap');
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'main.ts'), main);
    for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, 'src', name), text);
    writeFileSync(join(dir, 'run.ts'), `import * as mod from './src/main.ts';\nimport { runChild } from '${pathToFileURL(join(import.meta.dirname, '../../runner/child.ts')).href}';\nawait runChild(mod, 1, 1);\n`);
    return dir;
  };
  const check = (main: string, extra?: Record<string, string>) => {
    const dir = snapshotOf(main, extra);
    return checkModuleGraph(ctx, dir, join(dir, 'run.ts'), 'workflow file w.ts');
  };

  it('passes a file importing the sdk, zod, a local module and local JSON', async () => {
    await expect(check(
      `import { workflow, manual } from '@tranquil/sdk';\nimport * as z from 'zod';\nimport { x } from './lib.ts';\nimport d from './d.json' with { type: 'json' };\nexport default workflow('ok', (w) => { w.trigger(manual()); w.run(() => [x, d, z.string().parse('s')]); });\n`,
      { 'lib.ts': 'export const x = 1;\n', 'd.json': '{"a":1}\n' },
    )).resolves.toBeUndefined();
  }, 60_000);

  const secrets = project().secret;
  for (const [name, main, message] of hostileFiles(secrets)) {
    it(`refuses ${name}`, async () => {
      await expect(check(main)).rejects.toThrow(message);
    }, 60_000);
  }
});

describe('end to end: a hostile file approved with no grants (SQLite, real Deno child)', () => {
  it('a file whose graph leaves the snapshot is refused at registration with one line, before any child runs it', async () => {
    const p = project();
    const file = join(p.flows, 'npm.ts');
    writeFileSync(file, `import { workflow, manual } from '@tranquil/sdk';\nexport default workflow('npm', (w) => { w.trigger(manual()); w.run(async () => (await import('npm:left-pad@1.3.0')).default('x', 3)); });\n`);
    const err = await createEngine({ dataDir: join(p.root, 'data'), workflowFiles: [file], log: { level: 'silent' } }).then(() => undefined, (e: Error) => e);
    expect(err?.message).toBe(`workflow file ${file}: npm.ts imports 'npm:left-pad@1.3.0', a npm: specifier (not granted: only local modules are loaded); a workflow file may import only files in its own directory, @tranquil/sdk and zod (docs/runner.md, Threat model)`);
  }, 60_000);

  it('a run is refused at run time too: a snapshot whose graph leaves it after approval fails the run, naming it', async () => {
    const p = project();
    const file = join(p.flows, 'later.ts');
    const body = (v: string) => `import { workflow, manual } from '@tranquil/sdk';\nexport default workflow('later', (w) => { w.trigger(manual()); w.run(async ({ step }) => { await step.sleep('nap', '1s'); return '${v}'; }); });\n`;
    writeFileSync(file, body('v1'));
    const data = join(p.root, 'data');
    const first = await createEngine({ dataDir: data, workflowFiles: [file], log: { level: 'silent' } });
    await first.start();
    let runId = '';
    let version = '';
    try {
      await first.workflows.approve('later');
      runId = (await first.trigger('later')).runId;
      let view = await first.runs.get(runId);
      for (let i = 0; i < 600 && view.status !== 'sleeping'; i++) view = (await new Promise((r) => setTimeout(r, 50)), await first.runs.get(runId));
      expect(view.status).toBe('sleeping');
      version = view.version;
    } finally {
      await first.stop();
    }
    // The sleeping run's snapshot is changed on disk (as if the graph check had been
    // missed when it was taken), and the file moves on to a new version: only the run
    // resuming on the old snapshot meets the graph check, when it runs.
    writeFileSync(join(data, 'runner', 'snapshots', version, 'run.ts'), `import 'npm:left-pad@1.3.0';\n`, { flag: 'a' });
    writeFileSync(file, body('v2'));
    const second = await createEngine({ dataDir: data, workflowFiles: [file], log: { level: 'silent' } });
    await second.start();
    try {
      const done = await second.result(runId, { timeout: '60s' });
      expect(done.status).toBe('failed');
      expect(done.error?.message).toContain(`run ${runId} of workflow file ${file}: ${join(data, 'runner', 'snapshots', version, 'run.ts')} imports 'npm:left-pad@1.3.0', a npm: specifier (not granted`);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it("computed specifiers meet Deno's own checks: no read grant, no npm, no remote; the data dir is owner-only", async () => {
    const p = project();
    const file = join(p.flows, 'computed.ts');
    writeFileSync(file, `import { workflow, manual } from '@tranquil/sdk';
const tries = async (spec: string, type?: string) => {
  try { return 'LOADED ' + JSON.stringify(await import(spec, type ? { with: { type } } : undefined)); } catch (e) { return String(e).split('\\n')[0]; }
};
export default workflow('computed', (w) => {
  w.trigger(manual());
  w.run(async ({ step, input }) => step.do('probe', async () => ({
    key: await tries(input.dir + '/id' + '_rsa', 'text'),
    json: await tries(input.dir + '/serve' + '.json', 'json'),
    npm: await tries('npm:' + 'left-pad@1.3.0'),
    jsr: await tries('jsr:' + '@std/path'),
    remote: await tries('https://' + 'example.com/x.ts'),
    storage: (() => { try { localStorage.setItem('x', 'y'.repeat(1000)); return 'WROTE'; } catch (e) { return String(e).split('\\n')[0]; } })(),
    // A data: module whose STATIC import names the key: loaded at run time, so Deno checks it.
    dataStatic: await tries('data:text/javascript,' + encodeURIComponent('import t from "file://' + input.dir + '/id_rsa" with { type: "text" }; export default t;')),
    worker: await new Promise<string>((resolve) => {
      const w = new Worker('data:text/javascript,' + encodeURIComponent('import t from "file://' + input.dir + '/id_rsa" with { type: "text" }; postMessage("LOADED " + t);'), { type: 'module' });
      w.onmessage = (e) => (w.terminate(), resolve(String(e.data)));
      w.onerror = (e) => (e.preventDefault(), w.terminate(), resolve(e.message));
    }),
  })));
});
`);
    const data = join(p.root, 'data');
    const engine = await createEngine({ dataDir: data, workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('computed');
      const { runId } = await engine.trigger('computed', { dir: p.secret });
      const done = await engine.result(runId, { timeout: '60s' });
      expect(done.status).toBe('succeeded');
      const out = done.output as Record<string, string>;
      expect(out.key).toContain(`Requires read access to "${join(p.secret, 'id_rsa')}"`);
      expect(out.json).toContain(`Requires read access to "${join(p.secret, 'serve.json')}"`);
      expect(out.npm).toContain('--no-npm is specified');
      expect(out.jsr).toContain('--no-remote is specified');
      expect(out.remote).toMatch(/Requires import access|--no-remote/);
      // Nothing of the secrets came back through any path.
      expect(Object.values(out).join('\n')).not.toMatch(/PRIVATE-KEY-MATERIAL|CONTROL-TOKEN/);
      expect(out.storage).not.toBe('WROTE');
      expect(out.dataStatic).toContain(`Requires read access to "${join(p.secret, 'id_rsa')}"`);
      expect(out.worker).toContain(`Requires read access to "${join(p.secret, 'id_rsa')}"`);
    } finally {
      await engine.stop();
    }
    // Every dir and file the engine, the runner and Deno made under the fresh data dir.
    const bad: string[] = [];
    const walk = (path: string) => {
      const st = lstatSync(path);
      const mode = st.mode & 0o777;
      if (st.isDirectory()) {
        if (mode !== 0o700) bad.push(`${path} ${mode.toString(8)}`);
        for (const e of readdirSync(path)) walk(join(path, e));
      } else if (st.isFile() && mode !== 0o600) {
        // The read-only file standing where Deno would keep web storage (deno-runner.ts).
        if (!(path === join(data, 'runner', 'deno-dir', 'location_data') && mode === 0o400)) bad.push(`${path} ${mode.toString(8)}`);
      }
    };
    walk(data);
    expect(bad).toEqual([]);
  }, 120_000);
});

describe.each(['sqlite', 'restate'] as const)('the step protocol trusts only the session (table #5, %s)', (backend) => {
  it("a capability frame carrying another run's id and key is a ProtocolError; the provider never sees that run", async () => {
    const dir = tempDir();
    const engine = await createEngine({ backend, dataDir: join(dir, 'data'), workflowFiles: [join(import.meta.dirname, 'fixtures', 'forger.ts')], log: { level: 'silent' } });
    await engine.start();
    try {
      await engine.workflows.approve('forger');
      const calls: { runId: string; key: string }[] = [];
      engine.capabilities.provide('vault.read', {}, (_input, info) => (calls.push({ runId: info.runId, key: info.idempotencyKey }), 'VICTIM-SECRET'));
      const { runId } = await engine.trigger('forger', { victim: 'victim-run' });
      let run = await engine.runs.get(runId);
      for (let i = 0; i < 600 && !['succeeded', 'failed'].includes(run.status); i++) {
        await new Promise((r) => setTimeout(r, 50));
        run = await engine.runs.get(runId);
      }
      expect(calls).toEqual([]);
      expect(JSON.stringify(run)).not.toContain('VICTIM-SECRET');
      expect(run.status).toBe('failed');
      expect(run.error?.name).toBe('ProtocolError');
      expect(JSON.stringify(run)).toContain("capability frame for run 'victim-run', key 'victim-run/read', attempt 1: not a capability step attempt of run");
    } finally {
      await engine.stop();
    }
  }, 120_000);
});

describe('layer: the OS sandbox (bubblewrap), alone', () => {
  const confinement = detectConfinement();
  const why = confinement.kind === 'none' ? confinement.why : '';
  it.skipIf(confinement.kind !== 'bwrap')(`holds table #1 with the graph check and the snapshot scan bypassed${why ? ` [skipped: ${why}]` : ''}`, async () => {
    const p = project();
    const data = tempDir();
    const importMap = writeImportMap(data);
    const snap = join(data, 'snap');
    mkdirSync(join(snap, 'src'), { recursive: true });
    // A snapshot as if both other layers had let it through: the exact attack of the issue.
    const escaped = join(p.secret, 'id_rsa').replaceAll('/', '\\u002f');
    writeFileSync(join(snap, 'src', 'main.ts'), `try { console.log('GOT ' + (await import('${escaped}', { with: { type: 'text' } })).default); } catch (e) { console.log('REFUSED ' + String(e).split('\\n')[0]); }\n`);
    const denoDir = join(data, 'deno-dir');
    mkdirSync(denoDir);
    const binary = findDeno();
    const view = { binary, denoDir, snapshotDir: snap, engine: engineDirs(join(import.meta.dirname, '../..'), childPackageDirs(), importMap), read: [], write: [], net: false };
    const run = (c: Confinement) => {
      const cmd = childCommand(c, view, ['run', ...describeFlags(importMap), join(snap, 'src', 'main.ts')], 256);
      return execFileSync(cmd.file, cmd.args, { env: { DENO_DIR: denoDir, NO_COLOR: '1' }, cwd: snap, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    };
    // Without it, Deno loads the key (that is the hole the other layers close)...
    expect(run({ kind: 'none', why: 'test' })).toContain('GOT PRIVATE-KEY-MATERIAL');
    // ...under it, the file is not there at all.
    const confined = run(confinement);
    expect(confined).not.toContain('PRIVATE-KEY');
    expect(confined).toContain(`REFUSED TypeError: Module not found "file://${join(p.secret, 'id_rsa')}"`);
  }, 60_000);

  it.skipIf(confinement.kind !== 'bwrap')(`a child killed at once, before bwrap told its pid, leaves no process behind and ends${why ? ` [skipped: ${why}]` : ''}`, async () => {
    // Killing bwrap before it let its own child go left that child blocked forever (holding
    // the output pipes, so the engine never saw the exit): the kill now waits for the pid.
    const dir = tempDir();
    mkdirSync(join(dir, 'dd'));
    writeFileSync(join(dir, 'wait.ts'), 'await new Promise((r) => setTimeout(r, 60_000));\n');
    const cmd = childCommand(confinement, { binary: findDeno(), denoDir: join(dir, 'dd'), snapshotDir: dir, engine: [], read: [], write: [], net: false }, ['run', join(dir, 'wait.ts')], 256);
    const children = Array.from({ length: 5 }, () => new DenoChild(cmd.file, cmd.args, { DENO_DIR: join(dir, 'dd') }, dir, cmd.infoFd));
    for (const c of children) c.kill();
    const ends = await Promise.race([Promise.all(children.map((c) => c.exited)), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
    expect(ends).not.toBe('hung');
    const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(dir));
    expect(left).toEqual([]);
  }, 60_000);

  it('the runner says whether it confines children, and why not', () => {
    const r = new DenoRunner({ dataDir: tempDir(), maxPayloadBytes: 1024 });
    expect(r.confinement).toEqual(confinement);
    expect(new DenoRunner({ dataDir: tempDir(), maxPayloadBytes: 1024, sandbox: 'off' }).confinement).toEqual({ kind: 'none', why: 'config deno.sandbox is off' });
  });
});

describe('grants that say what they mean (table #8)', () => {
  it("a read grant covering the data dir or the key file is refused, written and resolved; a symlinked grant shows its target", async () => {
    const root = tempDir();
    const keyFile = join(root, 'keys', 'payload.key');
    mkdirSync(join(root, 'keys'));
    writeFileSync(keyFile, 'k1:'.padEnd(48, 'x'), { mode: 0o600 });
    const decl = (read: string[]) => `import { workflow, manual } from '@tranquil/sdk';\nexport default workflow('reader', { permissions: { read: ${JSON.stringify(read)} } }, (w) => { w.trigger(manual()); w.run(() => 1); });\n`;
    const file = join(root, 'reader.ts');
    const refused = async (read: string[]) => {
      writeFileSync(file, decl(read));
      return createEngine({ dataDir: join(root, '.tranquil'), workflowFiles: [file], log: { level: 'silent' } }).then(() => 'accepted', (e: Error) => e.message);
    };
    expect(await refused(['.'])).toBe(`workflow file ${file}: its read grant '.' (${root}) covers the engine's data dir ${join(root, '.tranquil')}; a workflow file is never granted the engine's own files (docs/runner.md, Threat model)`);
    symlinkSync(join(root, '.tranquil'), join(root, 'symdata'));
    expect(await refused(['./symdata'])).toContain(`its read grant './symdata' (${join(root, 'symdata')} -> ${join(root, '.tranquil')}) covers the engine's data dir`);
    process.env.TRANQUIL_KEY_FILE = keyFile;
    try {
      expect(await refused(['./keys'])).toContain(`its read grant './keys' (${join(root, 'keys')}) covers the payload key file ${keyFile}`);
    } finally {
      delete process.env.TRANQUIL_KEY_FILE;
    }
  }, 60_000);
});

describe('the approval shows each granted path resolved', () => {
  it("`workflows approve` prints a read grant as written, absolute, and through its symlink", () => {
    const p = project();
    symlinkSync(p.secret, join(p.flows, 'symdata'));
    const text = describeApproval({ workflow: 'w', hash: 'h', version: 'v', declaration: { read: ['./symdata', './plain'], net: ['a.com:443'] }, released: [], file: join(p.flows, 'w.ts') });
    expect(text).toContain(`  read ./symdata (${join(p.flows, 'symdata')} -> ${p.secret})`);
    expect(text).toContain(`  read ./plain (${join(p.flows, 'plain')})`);
    expect(text).toContain('  net a.com:443');
  });

  it('a run blocked for approval, and `why`, show a symlinked read grant with where it leads', async () => {
    const p = project();
    symlinkSync(p.secret, join(p.flows, 'symdata'));
    const file = join(p.flows, 'linked.ts');
    writeFileSync(file, `import { workflow, manual } from '@tranquil/sdk';\nexport default workflow('linked', { permissions: { read: ['./symdata', './plain'], env: ['X_Y'] } }, (w) => { w.trigger(manual()); w.run(() => 1); });\n`);
    const engine = await createEngine({ dataDir: join(p.root, 'data'), workflowFiles: [file], log: { level: 'silent' } });
    await engine.start();
    try {
      const { runId } = await engine.trigger('linked');
      const run = await engine.runs.get(runId);
      expect(run.status).toBe('blocked');
      const sym = `read:./symdata (${join(p.flows, 'symdata')} -> ${p.secret})`;
      const plain = `read:./plain (${join(p.flows, 'plain')})`;
      expect(run.error?.message).toContain(`never approved: added env:X_Y, ${plain}, ${sym}; approve with`);
      expect((await engine.runs.explain(runId)).details).toContain(`added: env:X_Y, ${plain}, ${sym}`);
    } finally {
      await engine.stop();
    }
  }, 60_000);
});
