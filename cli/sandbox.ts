// Whether workflow-file children are confined by the OS sandbox here (issue 36): said by
// `tranquil check` and by `why` of a file's run, with the same line the engine logs at start.
import { resolveConfig } from '../compose/config.ts';
import { confinementLine, detectConfinement } from '../src/adapters/deno/confine.ts';
import { findSnapshot } from '../src/adapters/deno/snapshot.ts';
import type { Project } from './project.ts';

export interface SandboxStatus {
  confined: boolean;
  /** The bwrap binary when confined; why not otherwise. */
  bwrap?: string;
  why?: string;
  line: string;
}

/** As an engine of this project would start its children now (config deno.sandbox, PATH). */
export function sandboxStatus(project: Project): SandboxStatus {
  const setting = resolveConfig({ ...project.engine, dataDir: project.dataDir }).deno?.sandbox ?? 'auto';
  const c = detectConfinement(setting);
  const line = confinementLine(c);
  return c.kind === 'bwrap' ? { confined: true, bwrap: c.bwrap, line } : { confined: false, why: c.why, line };
}

/** The status for a run whose version is a workflow file's snapshot in the data dir; undefined
 *  for a run of in-process code (it has no child). */
export function runSandbox(project: Project, version: string | undefined): SandboxStatus | undefined {
  return version !== undefined && findSnapshot(project.dataDir, version) ? sandboxStatus(project) : undefined;
}
