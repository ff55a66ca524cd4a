// Standard Schema (https://standardschema.dev, v1): the interface zod 4, valibot and arktype
// schemas carry under `~standard`. Written out here (it is a type and one function), so the
// sdk takes any of them without depending on one. Used at the engine's boundaries: a
// workflow's input, an event trigger's payload, a declared signal, a webhook body
// (docs/values.md, Schemas).
import { ValidationError } from '../src/domain/errors.ts';

/** A Standard Schema (https://standardschema.dev, v1): what zod 4, valibot and arktype
 *  schemas are; the engine checks inputs, outputs and payloads with any of them. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The type a schema gives (after its transforms): what the code receives. */
export type InferOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : unknown;
/** The type a schema accepts: what a caller passes. */
export type InferInput<S> = S extends StandardSchemaV1<infer I, unknown> ? I : unknown;

export function isStandardSchema(v: unknown): v is StandardSchemaV1 {
  try {
    const s = (v as { '~standard'?: { version?: unknown; validate?: unknown } } | null)?.['~standard'];
    return typeof s === 'object' && s !== null && s.version === 1 && typeof s.validate === 'function';
  } catch {
    return false;
  }
}

/** `email: Invalid email address` (the first issue: its path and its rule). */
export function issueLine(issues: ReadonlyArray<StandardIssue>): string {
  const first = issues[0];
  if (!first) return 'invalid';
  const path = (first.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p));
  return `${path.length > 0 ? `${path.join('.')}: ` : ''}${first.message}`.replace(/\s*\n\s*/g, ' ');
}

/** The errors validateWith made from a schema's issues (not a schema that threw). */
const refusals = new WeakSet<Error>();

/** @internal True for an error validateWith made because the schema refused the value. */
export function isSchemaRefusal(err: unknown): boolean {
  return err instanceof Error && refusals.has(err);
}

/** Errors of a schema that could not be asked (a workflow file's check child that crashed,
 *  timed out or is stopping): not a verdict on the value. */
const unanswered = new WeakSet<Error>();

/** @internal Marks `err` as a schema that could not answer (see isSchemaUnanswered). */
export function schemaUnanswered<E extends Error>(err: E): E {
  unanswered.add(err);
  return err;
}

/** @internal True for an error marked by schemaUnanswered. */
export function isSchemaUnanswered(err: unknown): boolean {
  return err instanceof Error && unanswered.has(err);
}

/** The parsed value, or a one-line ValidationError `<what>: <field>: <rule>`. */
export async function validateWith<S extends StandardSchemaV1>(schema: S, value: unknown, what: string): Promise<InferOutput<S>> {
  const r = await schema['~standard'].validate(value);
  if (r.issues) {
    const err = new ValidationError(`${what}: ${issueLine(r.issues)}`);
    refusals.add(err);
    throw err;
  }
  return r.value as InferOutput<S>;
}
