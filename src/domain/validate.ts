// The one place a schema's failure becomes a ValidationError: `<label><path>: <message>`,
// naming the first thing that was wrong. Typed structurally (anything with zod's safeParse
// shape), so the domain stays free of the zod import.
import { ValidationError } from './errors.ts';

export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

export interface ParseSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: readonly SchemaIssue[] } };
}

export interface IssueFormat {
  /** How the failing field's path joins the label: `.` (default, `config.webhook.port`),
   *  ` ` (`file.ts webhook.port`), or 'omit' (the label alone names the field). */
  path?: '.' | ' ' | 'omit';
}

/** One line for a failed parse: the label, the first issue's path, its message. */
export function describeIssue(issues: readonly SchemaIssue[], label: string, format: IssueFormat = {}): string {
  const issue = issues[0];
  const sep = format.path ?? '.';
  const path = sep !== 'omit' && issue?.path.length ? `${sep}${issue.path.map(String).join('.')}` : '';
  return `${label}${path}: ${issue?.message ?? 'invalid'}`;
}

/** Parses `value` or throws a ValidationError naming what was wrong. A value that throws
 *  while being read (a proxy, a getter) is a bad argument too, not a crash. */
export function parseOrThrow<T>(schema: ParseSchema<T>, value: unknown, label: string, format: IssueFormat = {}): T {
  let r: ReturnType<ParseSchema<T>['safeParse']>;
  try {
    r = schema.safeParse(value);
  } catch (err) {
    throw new ValidationError(`${label}: cannot be read (${(err as Error)?.message ?? String(err)})`);
  }
  if (!r.success) throw new ValidationError(describeIssue(r.error.issues, label, format));
  return r.data;
}
