// Memory of a process (or its whole tree) from /proc, in MiB.
import { readFileSync, readdirSync } from 'node:fs';

/** A `kB` field of /proc/<pid>/status (VmRSS, RssAnon, RssFile, RssShmem, ...) in MiB. */
export function statusField(pid: number, key: string): number {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = s.match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export const rssMiB = (pid: number = process.pid): number => statusField(pid, 'VmRSS');
export const peakRssMiB = (pid: number = process.pid): number => statusField(pid, 'VmHWM');

/** PIDs of pid and all its descendants (e.g. a restate-server a backend spawned). */
export function processTree(root: number): number[] {
  const parent = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parent.get(ppid) ?? [];
      list.push(Number(d));
      parent.set(ppid, list);
    } catch { /* exited */ }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of parent.get(p) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** RSS summed over a process and its descendants. */
export const treeRssMiB = (root: number = process.pid): number =>
  processTree(root).reduce((a, p) => a + (rssMiB(p) || 0), 0);

/** PSS (shared pages divided among their sharers) summed over a process tree: a server of
 *  many processes sharing one buffer pool (Postgres) counted once, not once per process. */
export const treePssMiB = (root: number): number =>
  processTree(root).reduce((a, p) => {
    try {
      const m = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+)/m);
      return a + (m ? Number(m[1]) / 1024 : 0);
    } catch {
      return a;
    }
  }, 0);
