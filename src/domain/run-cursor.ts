// The `runs.list` page cursor: opaque to callers (base64url of a small JSON object), its
// content owned by the backend that made it (the SQLite row sequence, or Restate's
// invocation time and id). A cursor that does not decode, or came from the other backend,
// is a one-line ValidationError, never a wrong page.
import { Buffer } from 'node:buffer';
import { ValidationError } from './errors.ts';
import type { ParseSchema } from './validate.ts';

const BAD = 'runs.list cursor: not a cursor from runs.list on this backend (pass `next` from the previous page as it is)';

export function encodeCursor(backend: string, position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ b: backend, ...position }), 'utf8').toString('base64url');
}

export function decodeCursor<T>(backend: string, cursor: string, schema: ParseSchema<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(BAD);
  }
  if (typeof raw !== 'object' || raw === null || (raw as { b?: unknown }).b !== backend) throw new ValidationError(BAD);
  const r = schema.safeParse(raw);
  if (!r.success) throw new ValidationError(BAD);
  return r.data;
}
