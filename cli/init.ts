// `tranquil init`: scaffolds Tranquil into an existing Node project (a package.json in the
// directory): a config, one example workflow and its test (cli/init-templates.ts), in the
// project's module system ("type" in package.json) and language (TypeScript when a
// tsconfig.json or the typescript package is there; --typescript/--javascript override).
// Never overwrites: an existing file, or any existing tranquil.config.*, is skipped and said.
import type { Command } from 'commander';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { scaffold, type Language, type ModuleKind } from './init-templates.ts';
import { CONFIG_NAMES } from './project.ts';

export interface InitReport {
  dir: string;
  module: ModuleKind;
  language: Language;
  wrote: string[];
  skipped: { file: string; reason: string }[];
  next: string[];
}

const packageSchema = z.object({
  type: z.enum(['module', 'commonjs']).optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
}).passthrough();

export function init(dir: string, o: { typescript?: boolean; javascript?: boolean } = {}): InitReport {
  if (o.typescript && o.javascript) throw new ValidationError('init: --typescript and --javascript: use one, not both');
  const pkgFile = join(dir, 'package.json');
  if (!existsSync(pkgFile)) throw new ValidationError(`init: no package.json in ${dir} (run 'npm init -y' there first, then install @tranquil/engine and @tranquil/sdk)`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(pkgFile, 'utf8'));
  } catch (err) {
    throw new ValidationError(`init: ${pkgFile} is not valid JSON (${(err as Error).message.split('\n')[0]})`);
  }
  const pkg = parseOrThrow(packageSchema, raw, pkgFile, { path: ' ' });
  const module: ModuleKind = pkg.type === 'module' ? 'esm' : 'cjs';
  const hasTs = existsSync(join(dir, 'tsconfig.json')) || !!(pkg.dependencies?.typescript ?? pkg.devDependencies?.typescript);
  const language: Language = o.typescript ? 'ts' : o.javascript ? 'js' : hasTs ? 'ts' : 'js';
  const s = scaffold(module, language);

  const report: InitReport = { dir, module, language, wrote: [], skipped: [], next: [] };
  const existingConfig = CONFIG_NAMES.find((n) => existsSync(join(dir, n)));
  const put = (file: string, text: string) => {
    if (existsSync(join(dir, file))) return report.skipped.push({ file, reason: 'exists' });
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    // 'wx': fails rather than overwrite a file that appeared since the check.
    writeFileSync(join(dir, file), text, { flag: 'wx' });
    report.wrote.push(file);
  };
  if (existingConfig) report.skipped.push({ file: s.config.file, reason: `${existingConfig} exists: add hello from ./${s.workflow.file} to its workflows yourself` });
  else put(s.config.file, s.config.text);
  put(s.workflow.file, s.workflow.text);
  put(s.test.file, s.test.text);
  report.next = [`npx tranquil run hello --input '{"name":"you"}'`, s.testCommand];
  return report;
}

export function describeInit(r: InitReport): string {
  return [
    `${r.module === 'esm' ? 'ES module' : 'CommonJS'} ${r.language === 'ts' ? 'TypeScript' : 'JavaScript'} project in ${r.dir}`,
    ...r.wrote.map((f) => `  wrote   ${f}`),
    ...r.skipped.map((s) => `  skipped ${s.file} (${s.reason})`),
    'next:',
    ...r.next.map((c) => `  ${c}`),
  ].join('\n');
}

export function initCommand(program: Command): void {
  program.command('init')
    .description('add a config, an example workflow and its test to this Node project (never overwrites)')
    .option('--dir <dir>', 'the project directory (default: the current one)')
    .option('--typescript', 'write TypeScript (default when tsconfig.json or typescript is there)')
    .option('--javascript', 'write JavaScript')
    .option('--json', 'machine-readable JSON output')
    .action((o: { dir?: string; typescript?: boolean; javascript?: boolean; json?: boolean }) => {
      // `npm run tranquil` runs in the package root: resolve from where the user typed it.
      const cwd = (process.env.npm_lifecycle_event === 'tranquil' && process.env.INIT_CWD) || process.cwd();
      const r = init(resolve(cwd, o.dir ?? '.'), o);
      console.log(o.json ? JSON.stringify(r) : describeInit(r));
    });
}
