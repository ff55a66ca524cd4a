// The run reader for a data dir, chosen by backend: what the CLI's reading commands (runs
// list/describe, why) use, so they say what the engine API says on either backend. SQLite:
// the data dir's file, read-only. Restate: the admin API of the configured Restate, or of the
// embedded restate-server the engine started for this data dir (its address is recorded under
// <dataDir>/restate while it runs); the local file only answers for runs still in the outbox.
import { BackendUnavailableError } from '../src/domain/errors.ts';
import type { RunReader } from '../src/ports/run-reader.ts';
import { pidAlive } from '../src/platform/pid.ts';
import { outboxLookup, ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import { stepEventLogOn, type ResolvedConfig } from './config.ts';
import { payloadCodecFor } from './codec.ts';
import { DrainReads } from '../src/runtime/drain-reads.ts';

export interface RunReaderOptions {
  /** Workflow names whose runs to show on a shared Restate; undefined = all Tranquil runs. */
  workflows?: readonly string[];
}

/** undefined when the data dir holds nothing to read (no file, and no Restate to ask). */
export async function openRunReader(config: ResolvedConfig, options: RunReaderOptions = {}): Promise<RunReader | undefined> {
  const codec = payloadCodecFor(config);
  const file = ReadOnlyFile.open(config.dataDir, codec);
  if (config.backend === 'sqlite') return file?.runReader();
  try {
    const [{ RestateRunReader }, { listChildren, withLinks }] = await Promise.all([
      import('../src/adapters/restate/run-reader.ts'),
      import('../src/adapters/restate/child-links.ts'),
    ]);
    const admin = await openRestateAdmin(config);
    if (!admin) {
      if (!file) return undefined;
      throw notRunning(config.dataDir);
    }
    const restate = new RestateRunReader({ admin: () => admin, workflows: options.workflows, local: file && outboxLookup(file.store), codec });
    // During a drain the runs SQLite started before the switch are read from the file.
    const drained = file?.drainedRunIds() ?? [];
    const reader = file && drained.length ? new DrainReads(restate, file.runReader(), new Set(drained)) : restate;
    // Child links are kept with the outbox rows of this data dir's file (docs/children.md).
    const links = file && { parentOf: async (id: string) => file.store.links.parentOf(id), childRunIds: async (id: string) => file.store.links.childIds(id) };
    return {
      getRun: async (runId) => {
        const v = await reader.getRun(runId);
        if (!v || !file) return v;
        // Run control fields (deadline, rerun and fork links) are kept with the outbox rows too.
        const row = file.store.getRunRow(runId);
        if (row) file.store.control.decorate({ ...row, status: v.status }, v, true);
        return withLinks(links!, reader, v, true);
      },
      listRuns: async (filter) => {
        if (links && filter.parent !== undefined) return listChildren(links, reader, filter);
        const page = await reader.listRuns(filter);
        if (links) for (const v of page.runs) await withLinks(links, reader, v, false);
        return page;
      },
      childOutput: (runId) => reader.childOutput(runId),
      // Kept in Restate (workflow-pause-object.ts), not in the file.
      workflowPauses: () => restate.workflowPauses(),
      close: async () => file?.close(),
    };
  } catch (err) {
    file?.close();
    throw err;
  }
}

/** The admin API of the project's Restate (configured, or the embedded server recorded
 *  under the data dir), checked to answer; undefined when there is none to ask. */
export async function openRestateAdmin(config: ResolvedConfig): Promise<import('../src/adapters/restate/admin-api.ts').AdminApi | undefined> {
  const [{ AdminApi }, { readAdminFile }] = await Promise.all([import('../src/adapters/restate/admin-api.ts'), import('../src/adapters/restate/server-process.ts')]);
  let adminUrl = config.restate?.adminUrl;
  if (!adminUrl) {
    const recorded = readAdminFile(config.dataDir);
    if (!recorded) return undefined;
    if (!pidAlive(recorded.pid)) throw notRunning(config.dataDir);
    adminUrl = recorded.adminUrl;
  }
  const admin = new AdminApi(adminUrl.replace(/\/$/, ''));
  try {
    await admin.query('SELECT 1 AS ok');
  } catch (err) {
    if (err instanceof BackendUnavailableError) throw config.restate?.adminUrl ? new BackendUnavailableError(`restate backend: the admin API at ${adminUrl} does not answer: ${err.message}`) : notRunning(config.dataDir);
    throw err;
  }
  return admin;
}

const notRunning = (dataDir: string) =>
  new BackendUnavailableError(`restate backend: no restate-server is running for ${dataDir}; start \`tranquil serve\` or the app`);

/** The step events log of the project's Restate (the configured ingress, or the embedded
 *  server's recorded under the data dir while it runs), for a reader that executes nothing
 *  (the CLI): undefined when there is no Restate to ask. */
export async function openEventLog(config: ResolvedConfig): Promise<import('../src/runtime/step-events.ts').RemoteStepEvents | undefined> {
  // Nothing is logged there (restate.liveAcrossReplicas off): the caller polls the run.
  if (config.backend !== 'restate' || !stepEventLogOn(config.restate)) return undefined;
  const [{ EventLogReader }, { readAdminFile }, { readFileSync }, { join }] = await Promise.all([
    import('../src/adapters/restate/event-log.ts'), import('../src/adapters/restate/server-process.ts'), import('node:fs'), import('node:path'),
  ]);
  let ingress = config.restate?.ingressUrl;
  if (!ingress) {
    const recorded = readAdminFile(config.dataDir);
    if (!recorded || !pidAlive(recorded.pid)) return undefined;
    try {
      ingress = `http://127.0.0.1:${(JSON.parse(readFileSync(join(config.dataDir, 'restate', 'ports.json'), 'utf8')) as { ingress: number }).ingress}`;
    } catch {
      return undefined;
    }
  }
  const url = ingress.replace(/\/$/, '');
  return new EventLogReader(() => url);
}
