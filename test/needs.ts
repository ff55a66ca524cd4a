// Tests that drive a system program (a browser, a load balancer, a sandbox) say so with
// needs(): the group is skipped, with a reason, where the program is missing, and the skip
// summary at the end of `npm test` (test/reporter/skipped-summary.ts) names it and the command
// that installs it. The packages are the list in scripts/install-test-deps.sh (a test checks
// that this table agrees with it).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Debian package -> the program the tests run from it. */
export const SYSTEM_PACKAGES = {
  chromium: 'chromium',
  haproxy: 'haproxy',
  bubblewrap: 'bwrap',
  prometheus: 'prometheus',
  nftables: 'nft',
  faketime: 'faketime',
} as const;
export type SystemPackage = keyof typeof SYSTEM_PACKAGES;

export const INSTALL_COMMAND = 'scripts/install-test-deps.sh';

declare module 'vitest' {
  interface TaskMeta {
    /** Packages this test needs that are not installed here (so it was skipped). */
    missingPackages?: string[];
  }
}

/** The program's path: on PATH, or in an sbin dir a non-root PATH leaves out (as the script looks). */
export function findProgram(name: string, path = process.env.PATH ?? ''): string | undefined {
  const dirs = [...path.split(delimiter).filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface Needs {
  /** Each needed package's program path; undefined for the missing ones. */
  programs: Partial<Record<SystemPackage, string>>;
  missing: SystemPackage[];
  /** Why the group is skipped, or undefined when nothing is missing. */
  skipReason: string | undefined;
  /** Options for describe()/it(): the summary reads the missing packages from their meta. */
  options: { meta: { missingPackages: string[] } };
}

export function needs(...packages: SystemPackage[]): Needs {
  const programs: Partial<Record<SystemPackage, string>> = {};
  for (const p of packages) programs[p] = findProgram(SYSTEM_PACKAGES[p]);
  const missing = packages.filter((p) => programs[p] === undefined);
  return {
    programs,
    missing,
    skipReason: missing.length ? `${missing.map((p) => SYSTEM_PACKAGES[p]).join(', ')} not installed` : undefined,
    options: { meta: { missingPackages: missing } },
  };
}
