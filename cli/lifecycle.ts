// The CLI's data-lifecycle commands (issue 13, docs/data.md): `gc [--dry-run]`,
// `runs export <runId> <file>` and `runs import <file>` (compose/run-file.ts). A dry run on
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
import { findServe } from './control.ts';
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
    .action(async (runId: string, path: string, o: Common) => {
      const project = await loadProject(o);
      const f = exportRunFile(resolveConfig({ ...project.engine, dataDir: project.dataDir }), runId, path);
      print(o, { runId, file: path, steps: f.journal.length, status: f.run.status }, () => `exported run ${runId} (${f.run.status}, ${f.journal.length} steps) to ${path}`);
    });
  common(runs.command('import <file>').description('bring an exported run into this data dir (no engine may run on it); the next engine resumes it'))
    .action(async (path: string, o: Common) => {
      const project = await loadProject(o);
      const f = await importRunFile(resolveConfig({ ...project.engine, dataDir: project.dataDir }), path);
      print(o, { runId: f.run.runId, status: f.run.status, steps: f.journal.length }, () => `imported run ${f.run.runId} (${f.run.status}, ${f.journal.length} steps) into ${project.dataDir}`);
    });
}
