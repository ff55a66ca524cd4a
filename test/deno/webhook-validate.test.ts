// A webhook's `validate` in a workflow FILE (docs/runner.md, Registration without trust): a
// zod schema crosses from the no-permission describe child as JSON Schema and comes back as
// a schema the engine checks bodies with; a function cannot leave the file, so the file is
// refused in one line instead of being served with no check. (The end-to-end 202/400 cases
// are the conformance cases 'webhook: ...' in test/conformance/files/ported.ts.) Real Deno
// children.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateFile } from '../../cli/workflow-files.ts';

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
  it('a zod schema crosses as JSON Schema, defaults and formats kept (shown as the engine checks them); a function is refused naming the webhook', async () => {
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
});
