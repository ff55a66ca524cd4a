// The CLI around workflow files (issue 11), on a real Deno child: `run` of an unapproved file
// creates a blocked run, `why` shows the added grants and the approve command, `workflows
// approve` releases it, `runs describe` shows the child's stdout/stderr (bounded); `why` of
// a file's run and `check` say whether children are confined by bubblewrap here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectConfinement } from '../../src/adapters/deno/confine.ts';
import { tranquilCli } from '../cli-bin.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = tranquilCli();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('tranquil CLI and workflow files', () => {
  it('run -> blocked; why -> diff and command; workflows approve -> released; runs describe -> child output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-cli-files-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'chatty.ts'), `
import { workflow, manual } from '@tranquil/sdk';
export default workflow('file-chatty', { permissions: { env: ['TRANQUIL_CHATTY'] } }, (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => {
    for (let i = 0; i < 2000; i++) console.log('line ' + i + ' ' + 'x'.repeat(50));
    console.log('END');
    console.error('to stderr');
    return step.do('s', () => 7);
  });
});
`);
    writeFileSync(join(dir, 'tranquil.config.mjs'), `export default { workflows: [], workflowFiles: ['./chatty.ts'], dataDir: './data', log: { level: 'silent' } };\n`);
    const cliIn = (env: Record<string, string>, args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 90_000, env: { ...process.env, ...env } });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const cli = Object.assign((...args: string[]) => cliIn({}, args), { with: (env: Record<string, string>, ...args: string[]) => cliIn(env, args) });
    const run = JSON.parse(cli('run', 'file-chatty', '--json')) as { runId: string; status: string; error: { name: string } };
    expect(run.status).toBe('blocked');
    expect(run.error.name).toBe('ApprovalRequired');
    const why = cli('why', run.runId);
    expect(why).toContain('added: env:TRANQUIL_CHATTY');
    expect(why).toContain('approve with: tranquil workflows approve file-chatty');
    // Whether its children are confined by the OS sandbox here (issue 36), as `check` says.
    const here = detectConfinement();
    const confined = `  workflow file children are confined by bubblewrap (${here.kind === 'bwrap' ? here.bwrap : ''}): each sees only its snapshot`;
    const notConfined = (why: string) => `  workflow file children are NOT confined by bubblewrap: ${why}; the module graph check and Deno permissions still hold\n`;
    expect(why).toContain(here.kind === 'bwrap' ? confined : notConfined(here.why));
    expect(`  ${cli('check')}`).toContain(here.kind === 'bwrap' ? confined : notConfined(here.why));
    const noBwrap = { PATH: join(dir, 'no-such-bin') };
    expect(cli.with(noBwrap, 'why', run.runId)).toContain(notConfined('bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)'));
    expect(JSON.parse(cli.with(noBwrap, 'check', '--json'))).toEqual({ sandbox: {
      confined: false, why: 'bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)',
      line: notConfined('bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)').trim(),
    } });
    const approved = cli('workflows', 'approve', 'file-chatty');
    expect(approved).toContain('  env TRANQUIL_CHATTY');
    expect(approved).toContain(`released 1 blocked run: ${run.runId}`);
    const described = JSON.parse(cli('runs', 'describe', run.runId, '--json')) as { status: string; child: { pid: number; exit: string; stdout: string; stderr: string } };
    expect(described.status).toBe('succeeded');
    expect(described.child.exit).toBe('code 0');
    expect(described.child.stdout.endsWith('END\n')).toBe(true);
    expect(described.child.stdout.length).toBeLessThanOrEqual(64 * 1024); // bounded: the last 64 KiB
    expect(described.child.stdout).not.toContain('line 0 ');
    expect(described.child.stderr).toBe('to stderr\n');
    expect(cli('runs', 'describe', run.runId)).toContain('  stderr:\n    to stderr');
  }, 180_000);
});

describe('--json output through a slow pipe (issue 36)', () => {
  it('is complete past 64 KiB: the CLI drains stdout before it exits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-cli-pipe-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'big.ts'), `import { workflow, manual } from '@tranquil/sdk';
export default workflow('big', (w) => { w.trigger(manual()); w.run(async ({ step }) => step.do('s', () => 'x'.repeat(200_000))); });\n`);
    writeFileSync(join(dir, 'tranquil.config.mjs'), `export default { workflows: [], workflowFiles: ['./big.ts'], dataDir: './data', log: { level: 'silent' } };\n`);
    expect(spawnSync(process.execPath, [BIN, 'workflows', 'approve', 'big'], { cwd: dir, encoding: 'utf8', timeout: 90_000 }).status).toBe(0);
    // The reader starts a second late: by then a process that exits at once has lost all but
    // the pipe's 64 KiB.
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" run big --json | (sleep 1; cat)`], { cwd: dir, encoding: 'utf8', timeout: 90_000, maxBuffer: 16 * 1024 * 1024 });
    expect(r.stdout.length).toBeGreaterThan(200_000);
    const run = JSON.parse(r.stdout) as { status: string; output: string };
    expect(run.status).toBe('succeeded');
    expect(run.output).toHaveLength(200_000);
  }, 120_000);
});
