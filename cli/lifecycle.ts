// The CLI's data-lifecycle commands (issue 13, docs/data.md): `gc [--dry-run]`,
// `runs export <runId> <file>` and `runs import <file>` (compose/run-file.ts), and
// `check <file-or-dir>` (src/runtime/replay-check.ts: in-flight runs replayed against new code). A dry run on
// the SQLite backend with no serve running reads the data dir's file read-only (nothing
// starts, nothing is written); otherwise the command goes to the running serve, or to an
// in-process engine, like every mutating command.
import type { Command } from 'commander';
import { resolveConfig } from '../compose/config.ts';
import { payloadCodecFor } from '../compose/codec.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import { gcDryRun } from '../src/adapters/sqlite/retention.ts';
import { ValidationError } from '../src/domain/errors.ts';
import { DEFAULT_GC_BATCH, DEFAULT_RETENTION_MS, type GcReport } from '../src/domain/retention.ts';
import { exportRunFile, importRunFile } from '../compose/run-file.ts';
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { fixtureOf } from '../compose/fixtures.ts';
import { UnknownRunError } from '../src/domain/errors.ts';
import type { RunReader } from '../src/ports/run-reader.ts';
import type { Project } from './project.ts';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openRunReader } from '../compose/run-reader.ts';
import { checkInFlight, type CheckVerdict } from '../src/runtime/replay-check.ts';
import { isWorkflowDefinition, type WorkflowDefinition } from '../sdk/workflow.ts';
import { findServe } from '../src/adapters/http/control-client.ts';
import { sandboxStatus } from './sandbox.ts';
import { loadProject } from './project.ts';
import { common, mutate, print, type Common } from './program.ts';

function describeGc(r: GcReport): string {
  const verb = r.dryRun ? 'would remove' : 'removed';
  const lines = [`${verb} ${r.runs} finished run${r.runs === 1 ? '' : 's'} (finished before ${r.cutoff}) and ${r.events} inbox event${r.events === 1 ? '' : 's'}`];
  for (const s of r.sample) lines.push(`  ${s.runId}  ${s.workflow}  ${s.status}  ${s.finishedAt}`);
  if (r.sample.length < r.runs) lines.push(`  ... and ${r.runs - r.sample.length} more`);
  if (!r.dryRun) lines.push(`${r.batches} batch${r.batches === 1 ? '' : 'es'}, ${r.pagesReclaimed} page${r.pagesReclaimed === 1 ? '' : 's'} given back to the file system`);
  return lines.join('\n');
}

export function lifecycleCommands(program: Command): void {
  common(program.command('gc').description('remove finished runs older than retention.maxAge (default 30 days) with their journal; live runs are never touched'))
    .option('--dry-run', 'list what would be removed; remove nothing')
    .action(async (o: Common & { dryRun?: boolean }) => {
      const project = await loadProject(o);
      const config = resolveConfig({ ...project.engine, dataDir: project.dataDir });
      let report: GcReport;
      if (o.dryRun && config.backend === 'sqlite' && !findServe(project.dataDir)) {
        const file = ReadOnlyFile.open(project.dataDir, payloadCodecFor(config));
        if (!file) throw new ValidationError(`--data-dir: no Tranquil data in ${project.dataDir}`);
        try {
          report = gcDryRun(file.db, Date.now(), { maxAgeMs: config.retention?.maxAge ?? DEFAULT_RETENTION_MS, batchSize: config.retention?.batchSize ?? DEFAULT_GC_BATCH });
        } finally {
          file.close();
        }
      } else {
        report = (await mutate(o, { op: 'gc', dryRun: !!o.dryRun })) as GcReport;
      }
      print(o, report, () => describeGc(report));
    });

  const runs = program.commands.find((c) => c.name() === 'runs');
  if (!runs) throw new Error('the runs command group must be defined before lifecycleCommands');
  common(runs.command('export <runId> <file>').description('write the run (journal, pinned version and snapshot, input, status, signals) to one file (owner-only)'))
    .option('--fixture', 'write the journal as a test fixture instead (replayFixture in @tranquil/engine/testing)')
    .action(async (runId: string, path: string, o: Common & { fixture?: boolean }) => {
      const project = await loadProject(o);
      if (o.fixture) {
        const view = await withReader(project, (r) => r.getRun(runId));
        if (!view) throw new UnknownRunError(runId);
        writeFileSync(path, `${JSON.stringify(fixtureOf(view), null, 1)}\n`, { mode: 0o600 });
        chmodSync(path, 0o600);
        return print(o, { runId, file: path, steps: view.steps.length, fixture: true }, () => `wrote the journal of run ${runId} (${view.steps.length} steps) as a fixture to ${path}`);
      }
      const f = exportRunFile(resolveConfig({ ...project.engine, dataDir: project.dataDir }), runId, path);
      print(o, { runId, file: path, steps: f.journal.length, status: f.run.status }, () => `exported run ${runId} (${f.run.status}, ${f.journal.length} steps) to ${path}`);
    });
  common(runs.command('import <file>').description('bring an exported run into this data dir (no engine may run on it); the next engine resumes it'))
    .action(async (path: string, o: Common) => {
      const project = await loadProject(o);
      const f = await importRunFile(resolveConfig({ ...project.engine, dataDir: project.dataDir }), path);
      print(o, { runId: f.run.runId, status: f.run.status, steps: f.journal.length }, () => `imported run ${f.run.runId} (${f.run.status}, ${f.journal.length} steps) into ${project.dataDir}`);
    });

  common(program.command('check [fileOrDir]').description('say whether workflow-file children are confined by the OS sandbox here; with <fileOrDir>, also replay every in-flight run against the workflow code in it without running any step (exit 1 if any would diverge)'))
    .action(async (target: string | undefined, o: Common) => {
      const project = await loadProject(o);
      const sandbox = sandboxStatus(project);
      if (target === undefined) return print(o, { sandbox }, () => sandbox.line);
      const defs = await definitionsAt(resolve(process.env.INIT_CWD && process.env.npm_lifecycle_event === 'tranquil' ? process.env.INIT_CWD : process.cwd(), target));
      const config = resolveConfig({ ...project.engine, dataDir: project.dataDir });
      const reader = await openRunReader(config, { workflows: defs.map((d) => d.name) });
      if (!reader) throw new ValidationError(`--data-dir: no Tranquil data in ${project.dataDir}`);
      let verdicts: CheckVerdict[];
      try {
        verdicts = await checkInFlight(reader, defs);
      } finally {
        await reader.close();
      }
      const bad = verdicts.filter((v) => !v.ok);
      print(o, { checked: verdicts.length, diverging: bad, sandbox }, () =>
        [
          sandbox.line,
          `checked ${verdicts.length} in-flight run${verdicts.length === 1 ? '' : 's'} of ${defs.map((d) => d.name).join(', ')}: ${bad.length === 0 ? 'none would diverge' : `${bad.length} would diverge`}`,
          ...bad.map((v) => (v.ok ? '' : v.position !== undefined ? `  ${v.runId}  position ${v.position}: code now calls ${v.expected}, journal recorded ${v.recorded}` : `  ${v.runId}  ${v.message}`)),
        ].join('\n'),
      );
      if (bad.length > 0) process.exitCode = 1;
    });
}

/** Runs as the project's backend sees them (the same reader `runs describe` uses). */
async function withReader<T>(project: Project, fn: (r: RunReader) => Promise<T>): Promise<T> {
  const reader = await openRunReader(resolveConfig({ ...project.engine, dataDir: project.dataDir }));
  if (!reader) throw new ValidationError(`--data-dir: no Tranquil data in ${project.dataDir}`);
  try {
    return await fn(reader);
  } finally {
    await reader.close();
  }
}

/** The workflow() definitions a file exports, or every .ts/.js file of a directory. */
async function definitionsAt(path: string): Promise<WorkflowDefinition[]> {
  if (!existsSync(path)) throw new ValidationError(`check: '${path}' does not exist`);
  const files = statSync(path).isDirectory()
    ? readdirSync(path).filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && !/\.test\./.test(f)).sort().map((f) => join(path, f))
    : [path];
  const found = new Set<WorkflowDefinition>();
  for (const f of files) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(f).href)) as Record<string, unknown>;
    } catch (err) {
      throw new ValidationError(`check: cannot load ${f}: ${(err as Error).message.split('\n')[0]}`);
    }
    for (const v of Object.values(mod)) {
      if (isWorkflowDefinition(v)) found.add(v);
      else if (Array.isArray(v)) for (const x of v) if (isWorkflowDefinition(x)) found.add(x);
    }
  }
  if (found.size === 0) throw new ValidationError(`check: no workflow() definitions in ${path}`);
  return [...found];
}
