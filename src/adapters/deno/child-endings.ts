// How a Deno child ended, in words (a crash with its reason, or a kill from outside), and
// the guard that keeps Deno's web storage out of the shared DENO_DIR (issue 36).
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DenoChild } from './child-process.ts';

/** Why a run child that ended by itself before sending its outcome crashed; undefined when
 *  it was killed from outside (SIGKILL, SIGTERM: a lost child resumes in a new one). Asked
 *  only while no outcome came, so exit 0 is a crash too (`Deno.exit(0)` in workflow code):
 *  resumed instead, it ended every new child the same way, retried forever and uncancellable. */
export function crashReason(exit: { code: number | null; signal: string | null }, child: DenoChild, runId: string, memoryMiB: number, maxFileBytes?: number, maxWriteBytes?: number): string | undefined {
  // Killed by the engine for what it wrote (boundWrites): a crash with that reason, not a kill from outside.
  if (child.overWritten) return `the run child of ${runId} (pid ${child.pid}) wrote ${child.written} bytes to disk (${child.writtenBefore + child.written} in this run), past its run's bound of ${maxWriteBytes ?? '?'} bytes in total (config deno.maxWriteBytes), and was ended`;
  if (exit.signal === 'SIGKILL' || exit.signal === 'SIGTERM' || (exit.code === null && exit.signal === null)) return undefined;
  const how = exit.code !== null ? `exit ${exit.code}` : `signal ${exit.signal}`;
  if (exit.code === 0) return `the run child of ${runId} (pid ${child.pid}) ended (exit 0) before sending its outcome: ${lastLine(child.stderr)}`;
  // RLIMIT_FSIZE: the write past the bound raised SIGXFSZ, whose default action ends deno.
  if (exit.signal === 'SIGXFSZ') return `the run child of ${runId} (pid ${child.pid}) wrote a file past its bound of ${maxFileBytes ?? '?'} bytes (config deno.maxFileBytes) and was ended (signal SIGXFSZ)`;
  if (/out of memory|heap limit|allocation failed/i.test(child.stderr)) return `the run child of ${runId} (pid ${child.pid}) exceeded its memory cap of ${memoryMiB} MiB (config deno.memory) and ended (${how})`;
  return `the run child of ${runId} (pid ${child.pid}) crashed (${how}): ${lastLine(child.stderr)}`;
}

/** Deno keeps localStorage and the Cache API under DENO_DIR/location_data, shared by every
 *  child and kept between runs (issue 36: a file with no grant wrote 320 MiB there). That
 *  path is made a read-only empty file, so both fail in the child with "Not a directory";
 *  a file that needs storage declares a write path and keeps its data there. */
export function blockWebStorage(denoDir: string): void {
  const path = join(denoDir, 'location_data');
  try {
    if (statSync(path).isFile()) return;
    rmSync(path, { recursive: true, force: true }); // left by an engine before this one
  } catch {
    // absent
  }
  writeFileSync(path, '', { mode: 0o400 });
}

export function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] || '(no output)';
}

/** What a child that failed said: Deno's `error: Uncaught ...` line of an error thrown at the
 *  module's top level (its stack follows it, so the last line would be a stack frame), else
 *  the last line. */
export function errorLine(text: string): string {
  const uncaught = text.trim().split('\n').filter((l) => l.startsWith('error: ')).pop();
  return uncaught?.replace(/^error: Uncaught (\(in promise\) |\(in module\) )?/, '') ?? lastLine(text);
}
