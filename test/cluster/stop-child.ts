// Stops a child the test started, by its PID (never by name); resolves once it has exited.
import type { ChildProcess } from 'node:child_process';

export async function stopChild(c: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!c?.pid || c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise<void>((r) => c.once('exit', () => r()));
  process.kill(c.pid, signal);
  await gone;
}
