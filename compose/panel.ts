// The Runs panel for a host app (docs/panel.md), loaded on first use: hono and the panel's
// pages stay out of the engine's import-time load set (scripts/build.mjs checks it), so an
// app that never mounts the panel never pays for them.
import type { Engine } from '../src/runtime/engine.ts';
import type { Panel, PanelHolds, PanelOptions } from '../src/adapters/http/panel.ts';

export type { HeldRun, Panel, PanelHolds, PanelOptions } from '../src/adapters/http/panel.ts';

/** A panel to mount in the host's own HTTP server. */
export async function createPanel(engine: Engine, o: PanelOptions = {}): Promise<Panel> {
  return (await import('../src/adapters/http/panel.ts')).createPanel(engine, o);
}

/** The panel on its own listener (127.0.0.1 by default); its URL carries nothing secret.
 *  `holds`: the runs `tranquil dev` holds, shown on every page with the decision; `pollMs`:
 *  the pages' fallback poll (PanelOptions.pollMs). */
export async function servePanel(engine: Engine, o: { host?: string; port?: number; holds?: PanelHolds; pollMs?: number } = {}): Promise<{ url: string; token: string; close(): Promise<void> }> {
  return (await import('../src/adapters/http/panel.ts')).servePanel(engine, o);
}
