// What a process has caused to be written to storage, from Linux's per-process I/O
// accounting (/proc/<pid>/io `write_bytes`: counted when a page is dirtied, threads and
// reaped children included; tmpfs writes are not counted, they reach no storage).
import { readFileSync } from 'node:fs';

/** Bytes `pid` has written to storage so far; undefined where it cannot be read (not
 *  Linux, no such process, not ours, no task I/O accounting). */
export function writtenBytes(pid: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/io`, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^write_bytes:\s*(\d+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}
