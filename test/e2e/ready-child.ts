// The e2e tests' child processes (a `tranquil serve`, an app embedding the engine): wait for
// the JSON line that says the child is ready, or fail with its stderr when it exits first.
// Every child is added to `children`, which the test's afterEach stops by PID.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ReadyChild<T> {
  child: ChildProcess;
  exit: Promise<number | null>;
  /** What `ready` picked from the child's ready line. */
  ready: T;
}

export function whenReady<T>(child: ChildProcess, children: ChildProcess[], what: string, ready: (msg: Record<string, unknown>) => T | undefined): Promise<ReadyChild<T>> {
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((ok, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // not a JSON line
      }
      const v = ready(msg);
      if (v !== undefined) ok({ child, exit, ready: v });
    });
    void exit.then((code) => fail(new Error(`${what} exited early (${code}): ${stderr}`)));
  });
}

/** A `tranquil serve --json` is ready at its `{"event":"ready"}` line. */
export const serveReady = (m: Record<string, unknown>) => (m.event === 'ready' ? true : undefined);

/** Polls `f` until it returns something (20 ms apart, `tries` times). */
export async function until<T>(what: string, f: () => Promise<T | undefined>, tries = 1000): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}
