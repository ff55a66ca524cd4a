// Trigger state (events, schedules, slot ledger) for the CLI's reading commands, from where
// the engine keeps it: the data dir's file read-only, or, with `backend: 'restate'` and
// `restate.triggers: 'restate'`, Restate's admin API (the objects every replica shares), so
// `tranquil events list` shows the same events whichever replica's data dir it is run on.
import { BackendUnavailableError } from '../src/domain/errors.ts';
import type { EventFilter, EventView, ScheduleView, SlotFilter, SlotView } from '../src/ports/triggers.ts';
import { pidAlive } from '../src/platform/pid.ts';
import { ReadOnlyFile } from '../src/adapters/sqlite/run-reader.ts';
import type { ResolvedConfig } from './config.ts';

export interface TriggerReader {
  /** Where it reads: shown in messages. */
  where: string;
  listEvents(filter: EventFilter): Promise<EventView[]>;
  listSchedules(): Promise<ScheduleView[]>;
  listSlots(filter: SlotFilter): Promise<SlotView[]>;
  close(): void;
}

/** undefined when there is nothing to read (no file, and triggers are local). */
export async function openTriggerReader(config: ResolvedConfig): Promise<TriggerReader | undefined> {
  if (config.backend === 'restate' && config.restate?.triggers === 'restate') {
    const [{ AdminApi }, { ClusterTriggerClient }, { readAdminFile }] = await Promise.all([
      import('../src/adapters/restate/admin-api.ts'),
      import('../src/adapters/restate/cluster-triggers.ts'),
      import('../src/adapters/restate/server-process.ts'),
    ]);
    let adminUrl = config.restate.adminUrl;
    if (!adminUrl) {
      const recorded = readAdminFile(config.dataDir);
      if (!recorded || !pidAlive(recorded.pid)) throw new BackendUnavailableError(`restate backend: no restate-server is running for ${config.dataDir}; start \`tranquil serve\` or the app`);
      adminUrl = recorded.adminUrl;
    }
    const admin = new AdminApi(adminUrl.replace(/\/$/, ''));
    const client = new ClusterTriggerClient(() => {
      throw new BackendUnavailableError('the CLI reads trigger state only');
    }, () => admin);
    return {
      where: `Restate at ${adminUrl}`,
      listEvents: (f) => client.listEvents(f),
      listSchedules: () => client.listSchedules(),
      listSlots: (f) => client.listSlots(f),
      close: () => {},
    };
  }
  const file = ReadOnlyFile.open(config.dataDir);
  if (!file) return undefined;
  return {
    where: file.db.name,
    listEvents: async (f) => file.triggers.listEvents(f),
    listSchedules: async () => file.triggers.listSchedules(),
    listSlots: async (f) => file.triggers.listSlots(f),
    close: () => file.close(),
  };
}
