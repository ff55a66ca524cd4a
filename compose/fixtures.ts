// Journals as fixtures (docs/data.md): `tranquil runs export <runId> <file> --fixture` writes
// a run's journal as a small JSON file; `replayFixture(definition, file)` (from
// @tranquil/engine/testing) replays it against workflow code the way the engine would, with
// no step body run, so a production incident becomes a regression test.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { NonDeterminismError, ValidationError } from '../src/domain/errors.ts';
import type { Json } from '../src/domain/json.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import type { RunView } from '../src/domain/run-view.ts';
import { RUN_STATUSES } from '../src/domain/run-status.ts';
import { checkRun, type CheckVerdict } from '../src/runtime/replay-check.ts';
import type { WorkflowDefinition } from '../sdk/workflow.ts';

export const FIXTURE_FORMAT = 'tranquil-fixture';

const fixtureSchema = z
  .object({
    format: z.literal(FIXTURE_FORMAT),
    formatVersion: z.literal(1),
    runId: z.string().min(1),
    workflow: z.string().min(1),
    version: z.string(),
    status: z.enum(RUN_STATUSES),
    input: z.custom<Json>(() => true),
    steps: z.array(z.object({ seq: z.number().int().min(0), name: z.string().min(1), kind: z.string(), status: z.string(), attempts: z.number().int().min(0) }).passthrough()),
  })
  .strict();

/** A run's journal as `tranquil runs export <runId> <file> --fixture` writes it: the input
 *  for replayFixture. */
export type RunFixture = z.infer<typeof fixtureSchema>;

/** A run's view as a fixture. */
export function fixtureOf(view: RunView): RunFixture {
  return { format: FIXTURE_FORMAT, formatVersion: 1, runId: view.runId, workflow: view.workflow, version: view.version, status: view.status, input: view.input, steps: view.steps as RunFixture['steps'] };
}

/** Replays the fixture (a file path or its parsed content) against `definition` without
 *  running any step body. Rejects with NonDeterminismError (run, position, expected and
 *  recorded) when the code no longer matches the journal, or an Error saying how the replay
 *  failed; resolves with the verdict otherwise. */
export async function replayFixture(definition: WorkflowDefinition, fixture: string | RunFixture | unknown): Promise<CheckVerdict> {
  let raw = fixture;
  if (typeof fixture === 'string') {
    try {
      raw = JSON.parse(readFileSync(fixture, 'utf8'));
    } catch (err) {
      throw new ValidationError(`fixture ${fixture}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const f = parseOrThrow(fixtureSchema, raw, typeof fixture === 'string' ? `fixture ${fixture}` : 'fixture');
  if (f.workflow !== definition.name) throw new ValidationError(`fixture is a run of '${f.workflow}', not of '${definition.name}'`);
  const view = { runId: f.runId, workflow: f.workflow, version: f.version, status: f.status, input: f.input, createdAt: '', updatedAt: '', steps: f.steps } as unknown as RunView;
  const v = await checkRun(definition, view);
  if (v.ok) return v;
  if (v.position !== undefined) throw new NonDeterminismError(v.runId, v.position, v.expected ?? '?', v.recorded ?? '?');
  throw new Error(`fixture ${f.runId}: ${v.message}`);
}
