// A webhook's `validate` in a workflow FILE (docs/runner.md, Registration without trust): the
// schema stays in the file and its check child (no permission) runs it on every body, so a
// `.refine` and a transform hold as in-process, with the same 400 reason; a zod schema's JSON
// Schema crosses from the describe child only to be shown; a function cannot leave the file,
// so the file is refused in one line instead of being served with no check. (The other
// 202/400 cases are the conformance cases 'webhook: ...' in test/conformance/files/ported.ts.)
// Real Deno children.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateFile } from '../../cli/workflow-files.ts';
import { createEngine } from '@tranquil/engine';
import type { Engine } from '../../src/runtime/engine.ts';

const dir = mkdtempSync(join(tmpdir(), 'tranquil-hook-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = (validate: string) => `
import { workflow, webhook } from '@tranquil/sdk';
import { z } from 'zod';
void z;
export default workflow('hooked', (w) => {
  w.trigger(webhook({ path: 'in', validate: ${validate} }));
  w.run(async ({ input }) => input);
});
`;

describe('a webhook validate in a workflow file', () => {
  it('a zod schema is shown as its JSON Schema, defaults and formats kept; a function is refused naming the webhook', async () => {
    writeFileSync(join(dir, 'schema.ts'), flow(`z.object({ email: z.string().email(), plan: z.enum(['free', 'pro']).default('free') })`));
    writeFileSync(join(dir, 'fn.ts'), flow(`(body) => body !== null`));
    const v = await validateFile(join(dir, 'schema.ts'));
    expect(v.triggers).toHaveLength(1);
    const shown = v.triggers[0] as unknown as { type: string; path: string; validate: { properties: Record<string, { type?: string; default?: unknown }>; required: string[] } };
    expect(shown.type).toBe('webhook');
    expect(shown.validate.required).toEqual(['email']);
    expect(JSON.stringify(shown.validate.properties.email)).toMatch(/pattern/); // the email format, as the engine checks it
    expect(shown.validate.properties.plan?.default).toBe('free');
    await expect(validateFile(join(dir, 'fn.ts'))).rejects.toThrow(/fn\.ts: could not be described .*webhook 'in': in a workflow file, validate must be a zod schema/);
  }, 60_000);

  it("the file's own schema checks each body: a .refine refuses with its message (400, nothing stored), a transform reaches the run", async () => {
    const file = join(dir, 'refined.ts');
    writeFileSync(file, flow(`z.object({ email: z.string().email() }).refine((b) => b.email.endsWith('@x.test'), 'email must be at x.test').transform((b) => ({ ...b, domain: 'x.test' }))`));
    let engine: Engine | undefined;
    try {
      engine = await createEngine({ log: { level: 'silent' }, backend: 'sqlite', dataDir: join(dir, 'data-refined'), workflowFiles: [file] });
      await engine.start();
      await engine.workflows.approve('hooked');
      const url = await engine.webhookUrl('hooked');
      const post = (body: unknown) => fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const refused = await post({ email: 'a@elsewhere.test' });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('email must be at x.test');
      expect(await engine.runs.list({ workflow: 'hooked' })).toEqual([]);
      const ok = await post({ email: 'a@x.test' });
      expect(ok.status).toBe(202);
      const { runId } = (await ok.json()) as { runId: string };
      expect((await engine.result(runId, { timeout: '60s' })).output).toEqual({ email: 'a@x.test', domain: 'x.test' });
    } finally {
      await engine?.stop();
    }
  }, 120_000);
});
