// The approval gate of workflow files (issue 11; docs/runner.md, Approval). Owns: keeping a
// file's registration current with the file on disk (when a trigger fires, a changed file is
// snapshotted and described again, in a child with no permission), the hash of a
// declaration, and the decision whether a run of a file's version may execute: only when
// that version's declaration is one the user approved. It never approves by itself; the
// approvals are stored by the backend's file (the executor) and passed in.
import { sha256Hex } from '../domain/sha256.ts';
import { APPROVAL_REQUIRED, approvalRequired, canonicalDeclaration, type ApprovalRecord, type GrantPaths } from '../domain/approval.ts';
import type { ErrorInfo } from '../domain/errors.ts';
import type { Permissions } from '../domain/permissions.ts';
import type { FileDescription, RegisteredWorkflow, WorkflowRegistry } from './registry.ts';

/** What the Deno runner offers the gate (bound in compose/). */
export interface FileDescriber {
  /** The content digest of the file as it is on disk now (no child). */
  digestOf(path: string): string;
  /** Snapshots and describes the file (a child with no permission; cached per digest). */
  describe(path: string): Promise<FileDescription>;
  /** The declaration recorded with a version's snapshot; undefined if unknown. */
  declarationOf(version: string): Permissions | undefined;
  /** Where each read/write grant of the declarations leads, relative to the file's directory
   *  (`read:./symdata` -> `/srv/app/symdata -> /home/x/secrets`): shown with a blocked run. */
  grantPaths?(file: string, declarations: readonly (Permissions | undefined)[]): GrantPaths;
}

export function declarationHash(p: Permissions): string {
  return sha256Hex(canonicalDeclaration(p)).slice(0, 16);
}

export class FileGate {
  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly describer: FileDescriber,
  ) {}

  /** Re-describes the workflow's file if its content changed since it was registered, so a
   *  trigger creates the run at the version on disk (and blocks it if its declaration changed). */
  async refresh(name: string): Promise<RegisteredWorkflow> {
    const wf = this.registry.get(name);
    if (!wf.file) return wf;
    let digest: string;
    try {
      digest = this.describer.digestOf(wf.file.path);
    } catch {
      return wf; // the file is gone: runs keep the version registered last (its snapshot)
    }
    if (digest === wf.file.digest) return wf;
    return this.registry.replaceFile(await this.describer.describe(wf.file.path));
  }

  /** The live declaration of a file workflow, with its hash. */
  declared(name: string): { workflow: string; version: string; hash: string; declaration: Permissions } {
    const wf = this.registry.get(name);
    if (!wf.file) throw new Error(`workflow '${name}' is not a workflow file: it needs no approval`);
    return { workflow: name, version: wf.version, hash: declarationHash(wf.file.permissions), declaration: wf.file.permissions };
  }

  /** Whether a run of `wf` at `version` can still execute: the version registered now (a
   *  removed snapshot of it is taken again from the files on disk) or one whose snapshot is
   *  stored with its description (the declaration the gate checks). runs.fork asks this. */
  versionKept(wf: RegisteredWorkflow, version: string): boolean {
    if (!wf.file) return true;
    return version === wf.file.digest || this.describer.declarationOf(version) !== undefined;
  }

  /** Why a run of `wf` at `version` may not execute (blocked), or undefined when its
   *  declaration is approved. `approvals` are the workflow's, newest first. */
  blockReason(wf: RegisteredWorkflow, version: string, approvals: readonly ApprovalRecord[]): ErrorInfo | undefined {
    if (!wf.file) return undefined;
    const declaration = version === wf.file.digest ? wf.file.permissions : this.describer.declarationOf(version);
    if (!declaration) return { name: APPROVAL_REQUIRED, message: `workflow '${wf.definition.name}': the declaration of version ${version} is unknown (its snapshot is missing); it cannot run` };
    const hash = declarationHash(declaration);
    if (approvals.some((a) => a.hash === hash)) return undefined;
    return approvalRequired(wf.definition.name, approvals[0], declaration, hash, this.describer.grantPaths?.(wf.file.path, [declaration, approvals[0]?.declaration]));
  }
}
