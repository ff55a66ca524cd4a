// Every plain-workflow definition an engine has registered, kept in the data dir as the
// YAML it was given: <dataDir>/plain/<workflow>/v<version>-<hash>.yaml. Keyed by (workflow,
// version) and content hash: a version number is never given new content (refused), and
// earlier versions stay loadable for the runs pinned to them. Files are written once,
// atomically (temp file + rename), and never edited.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../../domain/errors.ts';

export interface StoredVersion {
  workflow: string;
  version: number;
  hash: string;
  file: string;
  text: string;
}

const FILE = /^v(\d+)-([0-9a-f]{12})\.yaml$/;

export class PlainVersionStore {
  constructor(private readonly dataDir: string) {}

  private dir(workflow: string): string {
    return join(this.dataDir, 'plain', workflow);
  }

  /** Every stored version of `workflow`, oldest first. */
  list(workflow: string): StoredVersion[] {
    const dir = this.dir(workflow);
    if (!existsSync(dir)) return [];
    const out: StoredVersion[] = [];
    for (const name of readdirSync(dir)) {
      const m = FILE.exec(name);
      if (!m) continue;
      const file = join(dir, name);
      out.push({ workflow, version: Number(m[1]), hash: m[2]!, file, text: readFileSync(file, 'utf8') });
    }
    return out.sort((a, b) => a.version - b.version);
  }

  /** Stores the version once; refuses other content under a version number already stored. */
  put(workflow: string, version: number, hash: string, text: string): StoredVersion {
    const stored = this.list(workflow);
    const same = stored.find((s) => s.version === version);
    if (same && same.hash !== hash) {
      throw new ValidationError(
        `workflow '${workflow}' version ${version} is already registered with different content (hash ${same.hash}, ${same.file}; this one is ${hash}): ` +
          'a version is never edited in place; give the change a new version number',
      );
    }
    if (same) return same;
    const dir = this.dir(workflow);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `v${version}-${hash}.yaml`);
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
    return { workflow, version, hash, file, text };
  }
}
