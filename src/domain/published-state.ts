// Published state (issue 41, docs/live-output.md): workflow code publishes a value under a key
// with ctx.publish; callers read the latest value of a key while the run goes on and after it
// ended. Each publish is a journal entry of kind `publish` whose result is `{ key, value }`
// (the value in its stored form, src/domain/value-codec.ts), so the state is read from the
// journal itself: it needs no storage of its own, a replay hands the recorded entry back
// instead of publishing again (an older value never lands over a newer one), and what
// runs.retry or a resume discards of the journal is discarded from the state too. Pure.
import * as z from 'zod';
import type { Json } from './json.ts';
import { once } from './once.ts';
import type { StepView } from './run-view.ts';
import { parseOrThrow } from './validate.ts';
import { streamedParts } from './value-codec.ts';

export const MAX_STATE_KEY = 200;

/** A key is shown in `why`, the CLI and step names (`publish:<key>`): printable, no `#`
 *  (reserved for repeated step names), no whitespace at either end. */
export const stateKeySchema = once(() => z.string()
  .min(1, 'must not be empty')
  .max(MAX_STATE_KEY, `at most ${MAX_STATE_KEY} characters`)
  .regex(/^[^\p{Cc}#]+$/u, "no control characters and no '#'")
  .refine((k) => k.trim() === k, 'no whitespace at either end'));

/** The key, or a one-line ValidationError naming `what` (ctx.publish, runs.state). */
export function checkStateKey(key: unknown, what: string): string {
  return parseOrThrow(stateKeySchema(), key, what);
}

/** The step name of a publish: one step per call, `publish:<key>#2` for the second. */
export const publishStepName = (key: string): string => `publish:${key}`;

/** The step name of a stream's write or close: `stream:<name>`, `stream:<name>#2`, ... */
export const streamStepName = (name: string): string => `stream:${name}`;

/** Where a stream step stands in its stream: the k-th step of a stream (`stream:<name>#k`)
 *  holds chunk k-1, and a close, always the last, stands at the count of chunks. */
export function streamOffset(stepName: string): number {
  const m = /#(\d+)$/.exec(stepName);
  return m ? Number(m[1]) - 1 : 0;
}

/** Which step wrote a chunk: a `stream` step (workflow code) or a step body's attempt. */
export interface ChunkSource {
  step: string;
  attempt: number;
}

/** A stream as its journal holds it: its chunks (stored form) in the order of their steps'
 *  positions (a body's chunks, committed with its step's result, in the order it wrote
 *  them), which step wrote each, and whether the code closed it. */
export function streamOf(steps: readonly StepView[], name: string): { chunks: Json[]; sources: ChunkSource[]; closed: boolean } {
  const chunks: Json[] = [];
  const sources: ChunkSource[] = [];
  let closed = false;
  // Views list steps by position; sorted anyway, as the order is the stream's.
  for (const s of [...steps].sort((a, b) => a.seq - b.seq)) {
    if (s.status !== 'succeeded') continue;
    if (s.kind === 'stream') {
      const r = s.result as { stream?: unknown; chunk?: Json; closed?: unknown } | null | undefined;
      if (!r || r.stream !== name) continue;
      if (r.closed === true) closed = true;
      else chunks.push(r.chunk ?? null), sources.push({ step: s.name, attempt: s.attempts });
      continue;
    }
    const parts = streamedParts(s.result);
    if (!parts) continue;
    for (const [n, c] of parts.c) if (n === name) chunks.push(c), sources.push({ step: s.name, attempt: s.attempts });
  }
  return { chunks, sources, closed };
}

/** The chunks one step holds for each stream, counted (a body's, or a `stream` step's one). */
export function chunksOf(s: { kind: string; result?: Json }): [string, Json][] {
  if (s.kind === 'stream') {
    const r = s.result as { stream?: unknown; chunk?: Json; closed?: unknown } | null | undefined;
    return r && typeof r.stream === 'string' && r.closed !== true ? [[r.stream, r.chunk ?? null]] : [];
  }
  return streamedParts(s.result)?.c ?? [];
}

/** The names of the streams the code or a step body wrote to or closed, in the order it first did. */
export function streamNames(steps: readonly StepView[]): string[] {
  const names = new Set<string>();
  for (const s of [...steps].sort((a, b) => a.seq - b.seq)) {
    if (s.status !== 'succeeded') continue;
    const r = s.kind === 'stream' ? (s.result as { stream?: unknown } | null | undefined) : undefined;
    if (r && typeof r.stream === 'string') names.add(r.stream);
    for (const [n] of streamedParts(s.result)?.c ?? []) names.add(n);
  }
  return [...names];
}

/** One key's latest value as a reader gets it. */
export interface PublishedValue {
  key: string;
  /** Stored form (decode with decodeValue for a Map, a Date...). */
  value: Json;
  /** When it was published (ISO). */
  publishedAt?: string;
  /** The publish step that holds it. */
  step: string;
}

function published(s: StepView): { key: string; value: Json } | undefined {
  if (s.kind !== 'publish' || s.status !== 'succeeded') return undefined;
  const r = s.result as { key?: unknown; value?: Json } | null | undefined;
  return r && typeof r === 'object' && typeof r.key === 'string' ? { key: r.key, value: r.value ?? null } : undefined;
}

/** Every key's latest value, in the order the keys were first published. The latest is the
 *  last publish the code called (its position in the journal): concurrent publishes of one
 *  key resolve the same on every backend and every replay. */
export function publishedState(steps: readonly StepView[]): PublishedValue[] {
  const latest = new Map<string, { seq: number; v: PublishedValue }>();
  for (const s of steps) {
    const p = published(s);
    if (!p) continue;
    const had = latest.get(p.key);
    if (had && had.seq > s.seq) continue;
    const v: PublishedValue = { key: p.key, value: p.value, step: s.name };
    if (s.endedAt !== undefined) v.publishedAt = s.endedAt;
    latest.set(p.key, { seq: s.seq, v });
  }
  return [...latest.values()].map((e) => e.v);
}
