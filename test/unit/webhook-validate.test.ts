// runValidator(): a webhook's `validate` as a zod schema or a function, turned into ok/reason.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runValidator } from '../../src/runtime/webhook-validate.ts';

describe('runValidator', () => {
  it('a zod schema: the parsed value goes on; a failure names the field', async () => {
    const schema = z.object({ email: z.string().email(), plan: z.enum(['free', 'pro']).default('free') });
    expect(await runValidator(schema, { email: 'a@example.com' })).toEqual({ ok: true, body: { email: 'a@example.com', plan: 'free' } });
    const bad = await runValidator(schema, { email: 'nope' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/^email: /);
  });

  it('a function: false, a string or a throw rejects; anything else accepts', async () => {
    expect(await runValidator(() => true, { a: 1 })).toEqual({ ok: true, body: { a: 1 } });
    expect(await runValidator(() => undefined, null)).toEqual({ ok: true, body: null });
    expect(await runValidator(() => false, {})).toEqual({ ok: false, reason: 'rejected by validate' });
    expect(await runValidator(async () => 'missing signature', {})).toEqual({ ok: false, reason: 'missing signature' });
    expect(await runValidator(() => { throw new Error('bad shape'); }, {})).toEqual({ ok: false, reason: 'bad shape' });
  });

  it('no validator accepts the body as is', async () => {
    expect(await runValidator(undefined, [1, 2])).toEqual({ ok: true, body: [1, 2] });
  });
});
