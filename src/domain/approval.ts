// Approval of a workflow file's permission declaration (issue 11; docs/runner.md, Approval).
// Pure: the canonical form of a declaration (what is hashed and stored), the difference
// between the approved declaration and the one on disk as grants added/removed, and the
// one-line reason a run is `blocked` with, naming the exact command that approves it.
import type { ErrorInfo } from './errors.ts';
import type { Permissions } from './permissions.ts';

/** The stored approval of one declaration of one workflow. */
export interface ApprovalRecord {
  workflow: string;
  /** declarationHash(declaration): sha-256 of the canonical JSON, 16 hex digits. */
  hash: string;
  declaration: Permissions;
  approvedAt: number;
}

export const APPROVAL_REQUIRED = 'ApprovalRequired';

const KINDS = ['net', 'read', 'write', 'env'] as const;

/** The declaration with its kinds in a fixed order, entries sorted and deduplicated, empty
 *  kinds dropped: two declarations granting the same things have the same text. */
export function canonicalDeclaration(p: Permissions): string {
  const out: Record<string, string[]> = {};
  for (const k of KINDS) {
    const v = [...new Set(p[k] ?? [])].sort();
    if (v.length > 0) out[k] = v;
  }
  return JSON.stringify(out);
}

/** Each grant as `kind:entry` (`net:api.github.com:443`, `env:API_TOKEN`). */
function grants(p: Permissions | undefined): Set<string> {
  const s = new Set<string>();
  for (const k of KINDS) for (const e of p?.[k] ?? []) s.add(`${k}:${e}`);
  return s;
}

/** Grants (`net:host`, `read:path`, ...) a declaration adds and removes against the approved one. */
export interface DeclarationDiff {
  added: string[];
  removed: string[];
}

/** What `declared` grants beyond `approved` (added) and what it no longer grants (removed).
 *  No approval at all: every declared grant is added. */
export function declarationDiff(approved: Permissions | undefined, declared: Permissions): DeclarationDiff {
  const a = grants(approved);
  const d = grants(declared);
  return { added: [...d].filter((g) => !a.has(g)).sort(), removed: [...a].filter((g) => !d.has(g)).sort() };
}

/** Where a path grant (`read:./symdata`) leads: absolute, symlinks followed, as
 *  `/srv/app/symdata -> /home/x/secrets` (or just the absolute path). Resolved by the caller
 *  (the filesystem is I/O). */
export type GrantPaths = Readonly<Record<string, string>>;

/** A grant as written, with where it leads when it is a path: `read:./symdata (/srv/app/symdata -> /home/x/secrets)`. */
export function shownGrant(grant: string, paths?: GrantPaths): string {
  const where = paths?.[grant];
  return typeof where === 'string' ? `${grant} (${where})` : grant;
}

/** `added net:a.com:443, env:TOKEN; removed read:./data (/srv/app/data)`; `no grants (only
 *  the engine)` for a first approval of an empty declaration. */
export function diffLine(d: DeclarationDiff, paths?: GrantPaths): string {
  const parts: string[] = [];
  const show = (gs: string[]) => gs.map((g) => shownGrant(g, paths)).join(', ');
  if (d.added.length) parts.push(`added ${show(d.added)}`);
  if (d.removed.length) parts.push(`removed ${show(d.removed)}`);
  return parts.length ? parts.join('; ') : 'no grants (only the engine)';
}

/** The exact command that approves the declaration on disk. */
export function approveCommand(workflow: string): string {
  const arg = /^[A-Za-z0-9_.:@%+\/-]+$/.test(workflow) ? workflow : `'${workflow.replace(/'/g, `'\\''`)}'`;
  return `tranquil workflows approve ${arg}`;
}

/** The reason a run of `workflow` is created (or kept) `blocked`: its version's declaration
 *  is not an approved one. One line: what changed and how to approve it. */
export function approvalRequired(workflow: string, latest: ApprovalRecord | undefined, declared: Permissions, declaredHash: string, paths?: GrantPaths): ErrorInfo {
  const d = declarationDiff(latest?.declaration, declared);
  // Each path grant of the change with where it leads (issue 36: "read ./symdata" hid that
  // it named a secrets directory); kept in the fields for `why`.
  const shown = Object.fromEntries([...d.added, ...d.removed].filter((g) => paths?.[g] !== undefined).map((g) => [g, paths![g]!]));
  const diff = diffLine(d, shown);
  const what = latest ? `its permission declaration changed since the approval ${latest.hash}: ${diff}` : `its permission declaration was never approved: ${diff}`;
  return { name: APPROVAL_REQUIRED, message: `workflow '${workflow}' (declaration ${declaredHash}): ${what}; approve with: ${approveCommand(workflow)}`,
    fields: { added: d.added, removed: d.removed, ...(Object.keys(shown).length ? { paths: shown } : {}), declared: declaredHash, approved: latest?.hash ?? null, approve: approveCommand(workflow) } };
}
