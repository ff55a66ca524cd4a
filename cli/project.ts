// Where the CLI finds the user's workflows and settings: `--config <file>` (or
// tranquil.config.{ts,mts,js,mjs,cjs} in the working directory; a .ts or .js file with
// import/export loads as ESM even without "type": "module", bin/project-esm.mjs) exporting
// `{ workflows, workflowFiles?, dataDir?, webhook?, durability?, maxConcurrentRuns? }`, or
// `--workflows <dir>`, a directory of workflow FILES: each is registered as a workflow file
// (config `workflowFiles`), described and run by the Deno runner in sandboxed children,
// never imported into this process (docs/runner.md).
// The data dir is --data-dir, else the config's dataDir, else TRANQUIL_DATA_DIR, else .tranquil.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { isWorkflowDefinition, type WorkflowDefinition } from '../sdk/workflow.ts';

export interface ProjectOptions {
  config?: string;
  workflows?: string;
  dataDir?: string;
}

export interface Project {
  /** Undefined when no config or workflow dir was found (read-only commands still work). */
  source?: string;
  workflows: WorkflowDefinition[];
  /** Workflow files (absolute), run by the Deno runner; also in `engine.workflowFiles`. */
  workflowFiles: string[];
  dataDir: string;
  /** Other engine settings from the config file (webhook, durability, ...), passed to createEngine. */
  engine: Record<string, unknown>;
}

/** Looked for in this order; the first that exists is the project's config. */
export const CONFIG_NAMES = ['ts', 'mts', 'js', 'mjs', 'cjs'].map((ext) => `tranquil.config.${ext}`);

const configFileSchema = z
  .object({
    workflows: z.array(z.unknown()).default([]),
    dataDir: z.string().min(1).optional(),
  })
  .passthrough();

/** What to do about a config that failed to load, when the cause is one we know. */
export function loadHint(message: string, file: string): string | undefined {
  const cjsProject = 'the project\'s package.json has no "type": "module"';
  if (/Cannot require\(\) ES Module|ERR_REQUIRE_(CYCLE_)?(MODULE|ESM)/.test(message)) {
    return `${cjsProject} and this file mixes import/export with require/module.exports: use one of them, or rename it ${file.replace(/\.[cm]?[jt]s$/, '.mts')} (always ESM)`;
  }
  if (/(__dirname|__filename|require|module|exports) is not defined/.test(message)) {
    return 'it has import/export, so it loads as an ES module: use import.meta.dirname, import.meta.filename and import instead of __dirname, __filename and require, or write it with require/module.exports only as tranquil.config.cjs';
  }
  const missing = /Cannot find (?:package|module) '(@tranquil\/(?:engine|sdk))/.exec(message);
  if (missing) return `install ${missing[1]} in this project: npm install the tarballs of @tranquil/engine and @tranquil/sdk, docs/package.md`;
  return undefined;
}

async function importFile(file: string, generation?: number): Promise<Record<string, unknown>> {
  // tsx compiles .cts to CommonJS whose require() of the package's ES modules node refuses
  // inside the CLI's ES module loader ("request ... is not in cache").
  if (file.endsWith('.cts')) throw new ValidationError(`cannot load ${file}: a .cts config is not supported (fix: rename it to .ts; with import/export it loads as an ES module in any project)`);
  try {
    // A generation (tranquil dev) imports the config and the project files it reaches afresh.
    const url = pathToFileURL(file).href + (generation === undefined ? '' : `?tranquil-gen=${generation}`);
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    const hint = loadHint(`${(err as { code?: string }).code ?? ''} ${message}`, file);
    throw new ValidationError(`cannot load ${file}: ${message}${hint ? ` (fix: ${hint})` : ''}`);
  }
}

/** `npm run tranquil` runs in the package root; resolve paths from where the user typed it. */
const invokedFrom = (): string => (process.env.npm_lifecycle_event === 'tranquil' && process.env.INIT_CWD) || process.cwd();

export async function loadProject(o: ProjectOptions, cwd = invokedFrom(), generation?: number): Promise<Project> {
  const envDir = process.env.TRANQUIL_DATA_DIR || undefined;
  if (o.config && o.workflows) throw new ValidationError('--config and --workflows: use one, not both');

  if (o.workflows) {
    const dir = resolve(cwd, o.workflows);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ValidationError(`--workflows: '${o.workflows}' is not a directory`);
    const files = readdirSync(dir).filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && !/\.test\./.test(f)).sort();
    // Untrusted code: the engine only ever sees what a Deno child with no permission says.
    const workflowFiles = files.map((f) => join(dir, f));
    return { source: dir, workflows: [], workflowFiles, dataDir: resolve(cwd, o.dataDir ?? envDir ?? '.tranquil'), engine: { workflowFiles } };
  }

  const file = o.config ? resolve(cwd, o.config) : CONFIG_NAMES.map((n) => join(cwd, n)).find((f) => existsSync(f));
  if (o.config && !existsSync(file!)) throw new ValidationError(`--config: '${o.config}' does not exist`);
  if (!file) return { workflows: [], workflowFiles: [], dataDir: resolve(cwd, o.dataDir ?? envDir ?? '.tranquil'), engine: {} };

  const mod = await importFile(file, generation);
  const raw = (mod.default ?? mod) as unknown;
  const { workflows, dataDir, ...engine } = parseOrThrow(configFileSchema, raw, file, { path: ' ' });
  workflows.forEach((w, i) => {
    if (!isWorkflowDefinition(w)) throw new ValidationError(`${file} workflows[${i}]: not a workflow() definition`);
  });
  // A dataDir in the config is relative to the config file, not to where the CLI runs.
  const fromConfig = dataDir && (isAbsolute(dataDir) ? dataDir : resolve(dirname(file), dataDir));
  return {
    source: file,
    workflows: workflows as WorkflowDefinition[],
    workflowFiles: Array.isArray(engine.workflowFiles) ? (engine.workflowFiles as unknown[]).filter((f): f is string => typeof f === 'string') : [],
    dataDir: resolve(cwd, o.dataDir ?? fromConfig ?? envDir ?? '.tranquil'),
    engine: engine as Record<string, unknown>,
  };
}
