// `tranquil runs export|import` (docs/data.md): a run as one portable file. Export reads the
// data dir's file read-only (an engine may own it meanwhile); import takes the data dir as its
// owner for one transaction (so no engine may be running on it) and never starts the run: the
// next engine on that data dir resumes it. SQLite backend only.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NotSupportedError, UnknownRunError, ValidationError } from '../src/domain/errors.ts';
import { snapshotsDir } from '../src/adapters/deno/snapshot.ts';
import { exportRun, importRun, parseRunFile, type RunFile } from '../src/adapters/sqlite/run-file.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import { SqliteTriggerStore } from '../src/adapters/sqlite/trigger-store.ts';
import { payloadCodecFor } from './codec.ts';
import type { ResolvedConfig } from './config.ts';

function sqliteOnly(config: ResolvedConfig, what: string): void {
  if (config.backend !== 'sqlite') throw new NotSupportedError(`${what}: only the sqlite backend so far (Restate keeps the journal in restate-server)`);
}

/** Writes the run to `path` (owner-only); returns what was written. */
export function exportRunFile(config: ResolvedConfig, runId: string, path: string, now = Date.now()): RunFile {
  sqliteOnly(config, 'runs export');
  const data = ReadOnlyFile.open(config.dataDir, payloadCodecFor(config));
  if (!data) throw new ValidationError(`--data-dir: no Tranquil data in ${config.dataDir}`);
  let file: RunFile | undefined;
  try {
    file = exportRun(data.store, runId, now);
  } finally {
    data.close();
  }
  if (!file) throw new UnknownRunError(runId);
  const snap = join(snapshotsDir(config.dataDir), file.run.version);
  if (/^[0-9a-f]{6,64}$/.test(file.run.version) && existsSync(snap)) {
    const files: Record<string, string> = {};
    for (const name of readdirSync(snap)) if (statSync(join(snap, name)).isFile()) files[name] = readFileSync(join(snap, name), 'utf8');
    file.snapshot = { version: file.run.version, files };
  }
  writeFileSync(path, `${JSON.stringify(file, null, 1)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return file;
}

/** Reads, checks and imports a run file into the data dir. */
export async function importRunFile(config: ResolvedConfig, path: string): Promise<RunFile> {
  sqliteOnly(config, 'runs import');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ValidationError(`${path}: not a run file (${(err as Error).message.split('\n')[0]})`);
  }
  const file = parseRunFile(raw, path);
  const store = new SqliteTriggerStore({ dataDir: config.dataDir, durability: config.durability, codec: payloadCodecFor(config) });
  store.openNow();
  try {
    await store.queue.enqueue(() => importRun(store.store, file));
  } finally {
    await store.close();
  }
  // The workflow file's snapshot, content-addressed by version: written only when absent.
  if (file.snapshot) {
    const dir = join(snapshotsDir(config.dataDir), file.snapshot.version);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const [name, text] of Object.entries(file.snapshot.files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
    }
  }
  return file;
}
