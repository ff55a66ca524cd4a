// Plain-data workflows at engine build time (docs/plain-workflows.md): the config's
// `plainWorkflows` files and `plainWorkflow()` definitions in `workflows` are loaded, their
// actions checked against the registered ones (and the workflows their `invoke:` steps name), their version stored in the data dir
// (refused if that version number was stored with other content), and each is registered
// together with the earlier stored versions its runs may be pinned to.
import { readFileSync } from 'node:fs';
import { ValidationError } from '../src/domain/errors.ts';
import { PlainVersionStore } from '../src/adapters/plain/version-store.ts';
import { loadPlainWorkflow, type PlainDefinition } from '../src/runtime/plain/load.ts';
import { checkActions, checkInvokes, isPlainWorkflow, pinnedWorkflow } from '../src/runtime/plain/plain-workflow.ts';
import type { Actions } from '../src/runtime/plain/compile.ts';

export interface PlainConfig {
  dataDir: string;
  workflows: readonly unknown[];
  plainWorkflows?: readonly string[];
  actions?: Actions;
}

/** config.workflows with every plain workflow replaced by its registered, pinned form, and
 *  the `plainWorkflows` files after them. */
export function preparePlainWorkflows(config: PlainConfig): unknown[] {
  const files = (config.plainWorkflows ?? []).map((file) => ({ current: loadPlainWorkflow(readText(file), file), actions: {} as Actions }));
  if (files.length === 0 && !config.workflows.some(isPlainWorkflow)) return [...config.workflows];
  const store = new PlainVersionStore(config.dataDir);
  // Every workflow this engine registers: what an `invoke:` step may name.
  const names = new Set([...config.workflows.map((w) => (w as { name?: unknown }).name).filter((n): n is string => typeof n === 'string'), ...files.map((f) => f.current.workflow)]);
  const register = (plain: { current: PlainDefinition; actions: Actions }) => {
    const actions = { ...(config.actions ?? {}), ...plain.actions };
    const cur = plain.current;
    checkActions(cur, actions);
    checkInvokes(cur, names);
    store.put(cur.workflow, cur.version, cur.hash, cur.text);
    const earlier: PlainDefinition[] = [];
    for (const s of store.list(cur.workflow)) {
      if (s.version === cur.version) continue;
      try {
        earlier.push(loadPlainWorkflow(s.text, s.file));
      } catch {
        // Stored by an engine whose loader accepted it: a stricter loader leaves that
        // version unloadable; its runs fail naming the version (plain-workflow.ts).
      }
    }
    return pinnedWorkflow(cur, earlier, actions);
  };
  return [...config.workflows.map((w) => (isPlainWorkflow(w) ? register(w.plain) : w)), ...files.map(register)];
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ValidationError(`plainWorkflows: cannot read ${file}: ${(err as Error).message}`);
  }
}
