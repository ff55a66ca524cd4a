// The harness of the conformance suite THROUGH THE RUNNER: each scenario's workflow is a real
// workflow file (its source a string here), written into a fresh directory, registered with
// `workflowFiles`, approved, and executed in Deno children on the backend under test.
//
// Workflow code in a child cannot reach test variables, so the file is given two helpers in a
// prelude, both through its own declared directory `./out` (read + write granted, nothing
// else): `hit(name)` appends a mark to out/<name> (the test counts body executions with
// hits(name)) and `gate(name)` resolves once the test has called open(name). Everything else
// is observed through the engine's API, as a user would.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type EngineConfig } from '@tranquil/engine';
import type { Engine } from '../../../src/runtime/engine.ts';
import { PrewarmedDirs, warmRestate } from '../restate-prewarm.ts';

export type Backend = 'sqlite' | 'restate';

/** The declaration every flow of this suite carries (what `hit` and `gate` need). */
export const OUT_PERMISSIONS = `{ read: ['./out'], write: ['./out'] }`;

function prelude(out: string): string {
  return `import { workflow, manual, event, TerminalError, TimeoutError, CancelledError } from '@tranquil/sdk';
const OUT = ${JSON.stringify(`${out}/`)};
const hit = (name: string, text = '.') => Deno.writeTextFileSync(OUT + name, text, { append: true });
const gate = async (name: string) => {
  for (;;) {
    try { Deno.statSync(OUT + 'gate-' + name); return; } catch { await new Promise((r) => setTimeout(r, 10)); }
  }
};
const read = (name: string) => { try { return Deno.readTextFileSync(OUT + name); } catch { return ''; } };
void hit; void gate; void read; void manual; void event; void TerminalError; void TimeoutError; void CancelledError;
`;
}

export interface FlowRig {
  backend: Backend;
  engine: Engine;
  dir: string;
  /** The workflow file's path (rewrite it to test pinning). */
  file: string;
  /** How many marks `hit(name)` left. */
  hits(name: string): number;
  /** Text appended by `hit(name, text)`. */
  text(name: string): string;
  /** Opens `gate(name)` in the flow. */
  open(name: string): void;
  /** Writes out/<name> (what the flow's `read(name)` returns). */
  put(name: string, text: string): void;
  /** Stops the engine and starts a new one on the same data dir and files. */
  restart(): Promise<Engine>;
}

/** Restate: fresh dirs whose server already runs (restate-prewarm.ts), one warming at a time
 *  for the whole file; disposeWarmDirs() in an afterAll stops the one no case took. */
let warmDirs: PrewarmedDirs | undefined;
export const disposeWarmDirs = async (): Promise<void> => warmDirs?.dispose();

export class Rigs {
  private readonly open: Engine[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly backend: Backend) {}

  /** Writes the flow (prelude + `body`, which must `export default workflow(...)`), starts an
   *  engine with it as a workflow file and approves every flow's declaration. */
  async boot(bodies: string | string[], config: Omit<EngineConfig, 'backend' | 'dataDir' | 'workflowFiles'> = {}): Promise<FlowRig> {
    // A config of its own for Restate (external URLs, tracing) gets a server of its own.
    const dir =
      this.backend === 'restate' && config.restate === undefined && warmRestate
        ? await (warmDirs ??= new PrewarmedDirs('tranquil-files-restate-', (d) => join(d, 'data'))).take()
        : mkdtempSync(join(tmpdir(), `tranquil-files-${this.backend}-`));
    this.dirs.push(dir);
    const out = join(dir, 'out');
    mkdirSync(out);
    const files = (Array.isArray(bodies) ? bodies : [bodies]).map((body, i) => {
      const file = join(dir, `flow${i}.ts`);
      writeFileSync(file, `${prelude(out)}\n${body}\n`);
      return file;
    });
    const make = async () => {
      const engine = await createEngine({ log: { level: 'silent' }, ...config, backend: this.backend, dataDir: join(dir, 'data'), workflowFiles: files });
      await engine.start();
      this.open.push(engine);
      return engine;
    };
    const engine = await make();
    for (const name of workflowNames(files)) await engine.workflows.approve(name);
    const rig: FlowRig = {
      backend: this.backend,
      engine,
      dir,
      file: files[0]!,
      hits: (name) => (existsSync(join(out, name)) ? readFileSync(join(out, name), 'utf8').length : 0),
      text: (name) => (existsSync(join(out, name)) ? readFileSync(join(out, name), 'utf8') : ''),
      open: (name) => writeFileSync(join(out, `gate-${name}`), ''),
      put: (name, text) => writeFileSync(join(out, name), text),
      restart: async () => {
        await rig.engine.stop();
        rig.engine = await make();
        return rig.engine;
      },
    };
    return rig;
  }

  async cleanup(): Promise<void> {
    for (const e of this.open.splice(0)) await e.stop().catch(() => {});
    for (const d of this.dirs.splice(0)) {
      await warmDirs?.release(d);
      rmSync(d, { recursive: true, force: true });
    }
  }
}

/** The workflow names the files declare (read back from the engine's registration). */
function workflowNames(files: string[]): string[] {
  const names: string[] = [];
  for (const f of files) {
    const m = /export default workflow\('([^']+)'/.exec(readFileSync(f, 'utf8'));
    if (!m) throw new Error(`flow ${f} has no "export default workflow('<name>'"`);
    names.push(m[1]!);
  }
  return names;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
