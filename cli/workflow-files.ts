// The CLI's view of workflow files (docs/runner.md): `workflows validate <file>` (describe a
// file in a Deno child with no permission, without running it and without touching any data
// dir) and `workflows versions <name>` (the stored snapshots of a workflow with their
// declaration, approval and run counts, read from the data dir read-only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import { DenoRunner } from '../src/adapters/deno/deno-runner.ts';
import { listSnapshots, readManifest } from '../src/adapters/deno/snapshot.ts';
import { FileTables } from '../src/adapters/sqlite/file-tables.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import { ValidationError } from '../src/domain/errors.ts';
import type { Permissions } from '../src/domain/permissions.ts';
import { declarationHash } from '../src/runtime/file-gate.ts';
import type { Trigger } from '../sdk/triggers.ts';

export interface Validated {
  file: string;
  name: string;
  version: string;
  triggers: unknown[];
  declaration: Permissions;
  hash: string;
}

/** Describes `path` in a throw-away data dir (its snapshot and Deno cache are removed). */
export async function validateFile(path: string, deno?: string): Promise<Validated> {
  const file = resolve(path);
  const tmp = mkdtempSync(join(tmpdir(), 'tranquil-validate-'));
  try {
    const runner = new DenoRunner({ dataDir: tmp, binary: deno, maxPayloadBytes: 1 });
    runner.prepare();
    let d;
    try {
      d = await runner.describe(file);
    } catch (err) {
      const msg = (err as Error).message;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ValidationError(`${path}: no such file`);
      throw new ValidationError(msg.startsWith('workflow file') ? msg : `workflow file ${file}: ${msg}`);
    }
    return { file, name: d.name, version: d.file.digest, triggers: d.triggers.map(shown), declaration: d.file.permissions, hash: declarationHash(d.file.permissions) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** A trigger as printed: a webhook's validate as the JSON Schema the describe sent (the
 *  schema itself runs in the file's check child: docs/runner.md); an event's payload schema,
 *  and a validate with no JSON Schema form, as `declared`. */
function shown(t: Trigger): Trigger {
  // An event's payload schema is code in the file (run by its check child: docs/values.md).
  if (t.type === 'event' && t.schema !== undefined) return { ...t, schema: 'declared' } as unknown as Trigger;
  if (t.type !== 'webhook' || t.validate === undefined || typeof t.validate === 'function') return t;
  const { validateSchema, ...rest } = t as Trigger & { validateSchema?: unknown };
  // A file's validate runs in its check child; the describe sent its JSON Schema to show.
  if (validateSchema !== undefined) return { ...rest, validate: validateSchema } as unknown as Trigger;
  try {
    return { ...t, validate: z.toJSONSchema(t.validate as z.ZodType) } as unknown as Trigger;
  } catch {
    return { ...t, validate: 'declared' } as unknown as Trigger;
  }
}

export function describeValidated(v: Validated): string {
  const grants = (['net', 'read', 'write', 'env'] as const).flatMap((k) => (v.declaration[k] ?? []).map((x) => `    ${k} ${x}`));
  const triggers = v.triggers.map((t) => `    ${Object.entries(t as Record<string, unknown>).map(([k, x]) => (k === 'type' ? x : `${k}=${typeof x === 'object' ? JSON.stringify(x) : x}`)).join(' ')}`);
  return [
    `${v.file}: workflow '${v.name}', version ${v.version}`,
    `  triggers:${triggers.length ? `\n${triggers.join('\n')}` : ' (none)'}`,
    `  declaration ${v.hash}:${grants.length ? `\n${grants.join('\n')}` : ' (no permission)'}`,
  ].join('\n');
}

/** The project's workflow files as `workflows list` shows them (name, triggers), described
 *  through the data dir's runner snapshots (a child only for a version not described yet). */
export async function describeFiles(project: { dataDir: string; workflowFiles: string[]; engine: Record<string, unknown> }): Promise<{ name: string; triggers: Trigger[] }[]> {
  if (project.workflowFiles.length === 0) return [];
  const runner = new DenoRunner({ dataDir: project.dataDir, binary: (project.engine.deno as { binary?: string } | undefined)?.binary, maxPayloadBytes: 1 });
  runner.prepare();
  const out: { name: string; triggers: Trigger[] }[] = [];
  for (const f of project.workflowFiles) {
    const d = await runner.describe(f);
    out.push({ name: d.name, triggers: d.triggers });
  }
  return out;
}

export interface VersionView {
  version: string;
  firstSeen: string;
  source?: string;
  files: number;
  declarationHash: string;
  approved: boolean;
  liveRuns: number;
  storedRuns: number;
}

/** The stored snapshots of workflow `name`, oldest first. */
export function listVersions(dataDir: string, name: string): VersionView[] {
  // No database yet (files described, nothing run): no approvals, no runs.
  const data = ReadOnlyFile.open(dataDir);
  try {
    const tables = data && new FileTables(data.db);
    const approved = new Set(tables?.approvals(name).map((a) => a.hash) ?? []);
    const counts = tables?.runCounts(name) ?? new Map<string, { live: number; stored: number }>();
    // Describing reads only what each snapshot stored (no child, no permission needed).
    const runner = new DenoRunner({ dataDir, maxPayloadBytes: 1 });
    const out: VersionView[] = [];
    for (const s of listSnapshots(dataDir).sort((a, b) => a.takenAt - b.takenAt)) {
      const d = runner.described(s.digest);
      if (d?.name !== name) continue;
      const m = readManifest(dataDir, s.digest);
      const hash = declarationHash(d.permissions);
      const c = counts.get(s.digest) ?? { live: 0, stored: 0 };
      out.push({ version: s.digest, firstSeen: new Date(s.takenAt).toISOString(), source: m?.source, files: m?.files.length ?? 1, declarationHash: hash, approved: approved.has(hash), liveRuns: c.live, storedRuns: c.stored });
    }
    if (out.length === 0) throw new ValidationError(`workflows versions: no snapshot of workflow '${name}' in ${dataDir}`);
    return out;
  } finally {
    data?.close();
  }
}

export function describeVersions(name: string, list: VersionView[]): string {
  return [
    `workflow '${name}': ${list.length} version(s), oldest first`,
    ...list.map((v) => `  ${v.version}  first seen ${v.firstSeen}  declaration ${v.declarationHash} ${v.approved ? 'approved' : 'NOT approved'}  live runs ${v.liveRuns} (stored ${v.storedRuns})  ${v.files} file(s)${v.source ? `  from ${v.source}` : ''}`),
  ].join('\n');
}
