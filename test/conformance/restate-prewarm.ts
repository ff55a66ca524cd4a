// Fresh data dirs whose embedded restate-server is already running, for the Restate
// conformance files. Each case boots an engine on a fresh dir, and the server's cold start
// (~1 s, mostly waiting: ~0.25 s of CPU) was most of a short case's time, one after another
// for ~300 cases. Here the next case's server starts while the current case runs. The engine
// started on such a dir adopts the running server, as it adopts one a SIGKILLed engine left
// (server-process.ts, start), and stops it by PID at engine.stop(). A restart inside a case
// (same dir, server stopped) still spawns one itself, as does every test outside these files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestateServer } from '../../src/adapters/restate/server-process.ts';

/** TRANQUIL_TEST_COLD_RESTATE=1: every case starts its server cold, as before (to tell whether
 *  a failure has to do with the adoption, and to measure what the warm start saves). */
export const warmRestate = !process.env.TRANQUIL_TEST_COLD_RESTATE;

export class PrewarmedDirs {
  private next: Promise<Warm> | undefined;
  private readonly pending = new Set<Promise<Warm>>();
  private readonly taken = new Map<string, Warm>();

  /** `dataDirOf(dir)`: where the engine's data dir is inside a fresh dir (the dir itself, or
   *  a folder in it); the server runs on `<dataDir>/restate`, as the engine's would. */
  constructor(
    private readonly prefix: string,
    private readonly dataDirOf: (dir: string) => string = (dir) => dir,
  ) {}

  /** A fresh dir whose server answers; the next one starts warming now. */
  async take(): Promise<string> {
    const ready = this.next ?? this.warm();
    this.next = undefined;
    const warm = await ready;
    this.pending.delete(ready);
    this.taken.set(warm.dir, warm);
    this.next ??= this.warm();
    return warm.dir;
  }

  /** After the case's engines stopped, before its dir is removed: stops the dir's server if
   *  no engine took it over (one whose createEngine threw, a case that asserts that). */
  async release(dir: string): Promise<void> {
    const warm = this.taken.get(dir);
    this.taken.delete(dir);
    if (warm && !warm.exited) await warm.server.stop().catch(() => {});
  }

  /** Stops the servers no case took and removes their dirs (afterAll). */
  async dispose(): Promise<void> {
    this.next = undefined;
    for (const p of [...this.pending]) {
      this.pending.delete(p);
      const warm = await p.catch(() => undefined);
      if (!warm) continue;
      await warm.server.stop().catch(() => {});
      rmSync(warm.dir, { recursive: true, force: true });
    }
  }

  private warm(): Promise<Warm> {
    const dir = mkdtempSync(join(tmpdir(), this.prefix));
    const server = new RestateServer(this.dataDirOf(dir));
    const warm: Warm = { dir, server, exited: false };
    // Our child exited (the adopting engine stopped it): release() must not signal its pid.
    server.onUnexpectedExit = () => (warm.exited = true);
    const p = server.start().then(
      () => warm,
      (err: unknown) => {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      },
    );
    // A failed warm-up surfaces in the case that takes it, not as an unhandled rejection.
    p.catch(() => {});
    this.pending.add(p);
    return p;
  }
}

interface Warm {
  dir: string;
  server: RestateServer;
  exited: boolean;
}
