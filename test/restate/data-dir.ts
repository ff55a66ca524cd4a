// Test clean-up: a restate-server orphaned by a failed test is stopped by the PID it
// recorded in its data dir, then the dir is removed.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export function removeDataDir(dir: string): void {
  const pidFile = join(dir, 'restate', 'server.pid');
  if (existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
