// The CLI's plain-workflow commands (docs/plain-workflows.md):
//   workflows validate <file.yaml>   load and check it; errors name line, column and field
//   workflows register <file.yaml>   store its version in the data dir (refused when that
//                                    version number holds other content)
//   workflows versions <workflow>    stored versions, each with its live-run count
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ValidationError } from '../src/domain/errors.ts';
import { isTerminal } from '../src/domain/run-status.ts';
import type { RunReader } from '../src/ports/run-reader.ts';
import { PlainVersionStore } from '../src/adapters/plain/version-store.ts';
import { loadPlainWorkflow, type PlainDefinition } from '../src/runtime/plain/load.ts';
import { loadProject, type Project, type ProjectOptions } from './project.ts';

interface Opts extends ProjectOptions {
  json?: boolean;
}

export interface PlainCliKit {
  common(c: Command): Command;
  print(o: Opts, data: unknown, human: () => string): void;
  withRuns<T>(project: Project, fn: (reader: RunReader) => Promise<T>): Promise<T>;
  /** `validate` of a file that is not .yaml/.yml (a workflow file: docs/runner.md). */
  validateFile?(file: string, o: Opts): Promise<void>;
  /** `versions` of a workflow with no stored plain-data versions (a workflow file's snapshots). */
  fileVersions?(workflow: string, o: Opts): Promise<void>;
}

function load(file: string): PlainDefinition {
  if (!/\.ya?ml$/i.test(file)) throw new ValidationError(`${file}: a plain-data workflow is a .yaml or .yml file`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ValidationError(`cannot read ${file}: ${(err as Error).message}`);
  }
  return loadPlainWorkflow(text, file);
}

const summary = (d: PlainDefinition) => ({
  workflow: d.workflow, version: d.version, versionId: d.versionId, hash: d.hash,
  triggers: d.triggers.map((t) => ({ ...t, validate: undefined })), steps: d.steps.map((s) => ({ id: s.id, kind: s.kind, ...(s.kind === 'action' ? { action: s.action } : {}) })),
});

export function plainCommands(workflows: Command, kit: PlainCliKit): void {
  kit.common(workflows.command('validate <file>').description('check a plain-data workflow (.yaml: errors name line, column and field) or describe a workflow file without running it (a Deno child with no permission)'))
    .action(async (file: string, o: Opts) => {
      if (!/\.ya?ml$/i.test(file) && kit.validateFile) return kit.validateFile(file, o);
      const d = load(file);
      kit.print(o, { ok: true, ...summary(d) }, () => `ok: ${d.workflow} version ${d.version} (${d.versionId}), ${d.steps.length} step${d.steps.length === 1 ? '' : 's'}: ${d.steps.map((s) => s.id).join(', ')}`);
    });

  kit.common(workflows.command('register <file>').description("store a plain-data workflow's version in the data dir (a version number never takes other content)"))
    .action(async (file: string, o: Opts) => {
      const d = load(file);
      const project = await loadProject(o);
      const stored = new PlainVersionStore(project.dataDir).put(d.workflow, d.version, d.hash, d.text);
      kit.print(o, { ...summary(d), file: stored.file }, () => `registered ${d.workflow} version ${d.version} (${d.versionId}) in ${stored.file}`);
    });

  kit.common(workflows.command('versions <workflow>').description("stored versions of a plain-data workflow, or a workflow file's snapshots, with their live (unfinished) run counts"))
    .action(async (workflow: string, o: Opts) => {
      const project = await loadProject(o);
      const stored = new PlainVersionStore(project.dataDir).list(workflow);
      if (stored.length === 0 && kit.fileVersions) return kit.fileVersions(workflow, o);
      if (stored.length === 0) throw new ValidationError(`workflow '${workflow}': no stored versions in ${project.dataDir}`);
      const live = new Map<string, number>();
      const all = new Map<string, number>();
      await kit.withRuns(project, async (reader) => {
        for (let cursor: string | undefined, first = true; first || cursor; first = false) {
          const page = await reader.listRuns({ workflow, limit: 1000, ...(cursor ? { cursor } : {}) });
          for (const r of page.runs) {
            all.set(r.version, (all.get(r.version) ?? 0) + 1);
            if (!isTerminal(r.status)) live.set(r.version, (live.get(r.version) ?? 0) + 1);
          }
          cursor = page.next;
        }
      }).catch((err: unknown) => {
        // No run data yet (a version registered before any engine ran): no runs to count.
        if (!(err instanceof ValidationError && /no Tranquil data/.test(err.message))) throw err;
      });
      const rows = stored.map((s) => {
        const id = `v${s.version}-${s.hash}`;
        return { version: s.version, versionId: id, hash: s.hash, file: s.file, liveRuns: live.get(id) ?? 0, runs: all.get(id) ?? 0 };
      });
      kit.print(o, rows, () => rows.map((r) => `v${r.version}  ${r.versionId}  live runs ${r.liveRuns}  (runs ${r.runs})  ${r.file}`).join('\n'));
    });
}
