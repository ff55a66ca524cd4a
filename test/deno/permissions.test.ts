// The Deno flags of a run child come only from the declaration (src/domain/permissions.ts).
import { describe, expect, it } from 'vitest';
import { denoFlags, describeFlags, permissionsSchema, RUNNER_TOKEN_ENV } from '../../src/domain/permissions.ts';

const base = { enginePort: 40123, baseDir: '/srv/flows', importMap: '/data/runner/import-map.json' };

describe('denoFlags', () => {
  it('no declaration: only the engine port and the token variable', () => {
    expect(denoFlags({ ...base, permissions: {} })).toEqual([
      '--no-prompt', '--no-config', '--no-remote', '--no-npm', '--import-map=/data/runner/import-map.json',
      '--allow-net=127.0.0.1:40123', `--allow-env=${RUNNER_TOKEN_ENV}`,
    ]);
  });

  it('declared hosts, paths (relative to the file) and env names; never --allow-all or a bare grant', () => {
    const flags = denoFlags({ ...base, permissions: { net: ['api.github.com:443', 'api.github.com:443'], read: ['./data', '/etc/ssl'], write: ['out'], env: ['API_TOKEN'] } });
    expect(flags).toContain('--allow-net=127.0.0.1:40123,api.github.com:443');
    expect(flags).toContain('--allow-read=/srv/flows/data,/etc/ssl');
    expect(flags).toContain('--allow-write=/srv/flows/out');
    expect(flags).toContain(`--allow-env=${RUNNER_TOKEN_ENV},API_TOKEN`);
    for (const f of flags) {
      expect(f).not.toMatch(/^--allow-all|^-A$/);
      if (f.startsWith('--allow-')) expect(f).toContain('=');
    }
  });

  it('the describe child gets no permission at all', () => {
    expect(describeFlags('/m.json').filter((f) => f.startsWith('--allow'))).toEqual([]);
  });

  it('a declaration that would widen a grant is refused', () => {
    for (const bad of [{ net: ['a.com,b.com'] }, { net: ['https://a.com'] }, { net: ['*'] }, { read: [''] }, { env: ['API_*'] }, { run: ['sh'] }, { read: ['a,/'] }]) {
      expect(permissionsSchema().safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses a port that is not one', () => {
    expect(() => denoFlags({ ...base, enginePort: 0, permissions: {} })).toThrow(/not a TCP port/);
  });
});
