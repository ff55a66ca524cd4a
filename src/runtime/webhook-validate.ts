// Runs a webhook trigger's `validate` (a zod-like schema or a function) on a request body
// and turns the verdict into ok + body, or a one-line reason for the 400 answer.
import type { Json } from '../domain/json.ts';
import type { WebhookValidator } from '../../sdk/triggers.ts';
import { isStandardSchema, issueLine } from '../../sdk/standard-schema.ts';

type Verdict = { ok: true; body: Json } | { ok: false; reason: string };

interface IssueLike {
  path?: readonly PropertyKey[];
  message?: string;
}

function schemaReason(error: unknown): string {
  const issues = (error as { issues?: IssueLike[] } | undefined)?.issues;
  const first = issues?.[0];
  if (first) return `${first.path?.length ? `${first.path.map(String).join('.')}: ` : ''}${first.message ?? 'invalid'}`;
  return (error as { message?: string } | undefined)?.message ?? 'invalid body';
}

export async function runValidator(validate: WebhookValidator | undefined, body: Json): Promise<Verdict> {
  if (validate === undefined) return { ok: true, body };
  if (typeof validate === 'function') {
    try {
      const r = await validate(body);
      if (r === false) return { ok: false, reason: 'rejected by validate' };
      if (typeof r === 'string') return { ok: false, reason: r };
      return { ok: true, body };
    } catch (err) {
      return { ok: false, reason: (err as Error)?.message ?? String(err) };
    }
  }
  if (isStandardSchema(validate)) {
    try {
      const s = await validate['~standard'].validate(body);
      return s.issues ? { ok: false, reason: issueLine(s.issues) } : { ok: true, body: (s.value === undefined ? body : s.value) as Json };
    } catch (err) {
      return { ok: false, reason: (err as Error)?.message ?? String(err) };
    }
  }
  const r = (validate as { safeParse(data: unknown): unknown }).safeParse(body) as { success: boolean; data?: unknown; error?: unknown };
  if (!r.success) return { ok: false, reason: schemaReason(r.error) };
  // A schema may transform (defaults, coercion): the run sees the parsed value.
  return { ok: true, body: (r.data === undefined ? body : r.data) as Json };
}
