// Trigger state kept in the engine's own SQLite file, whatever the run backend: the event
// inbox, schedules and their slot ledger, webhook secrets and the webhook port. The SQLite
// executor fires slots inside its claim transaction; the Restate executor fires them the
// same way into its outbox and forwards the runs.
import { randomBytes } from 'node:crypto';
import type { TriggerState } from '../../ports/triggers.ts';
import type { WorkflowRegistry } from '../../runtime/registry.ts';
import type { CommitQueue } from './commit-queue.ts';
import { ScheduleBook, type CalendarFactory } from './schedule-book.ts';
import type { SqliteStore } from './store.ts';
import { TriggerTables } from './trigger-tables.ts';

export class LocalTriggers {
  readonly tables: TriggerTables;
  readonly schedules: ScheduleBook;

  constructor(
    store: SqliteStore,
    private readonly queue: CommitQueue,
    registry: WorkflowRegistry,
    calendar: CalendarFactory,
    private readonly now: () => number,
  ) {
    this.tables = new TriggerTables(store.db);
    this.schedules = new ScheduleBook(store, this.tables, registry, calendar);
    store.transaction(() => {
      this.schedules.register(now());
      // Webhook secrets are minted at first registration, so a URL is stable from then on.
      for (const w of registry.all()) {
        if (w.definition.triggers.some((t) => t.type === 'webhook')) this.mintWebhookSecret(w.definition.name);
      }
    });
  }

  mintWebhookSecret(workflow: string): string {
    const existing = this.tables.webhookSecret(workflow);
    if (existing) return existing;
    this.tables.insertWebhookSecret(workflow, randomBytes(32).toString('base64url'), this.now());
    return this.tables.webhookSecret(workflow)!;
  }

  /** The TriggerState port; `ensureStarted` guards every call, `rescan` re-runs the owner's timer scan. */
  state(ensureStarted: () => void, rescan: () => void): TriggerState {
    return {
      listEvents: async (filter) => (ensureStarted(), this.tables.listEvents(filter)),
      listSchedules: async () => (ensureStarted(), this.tables.listSchedules()),
      listSlots: async (filter) => (ensureStarted(), this.tables.listSlots(filter)),
      webhookSecret: async (workflow) => {
        ensureStarted();
        return this.queue.enqueue(() => this.mintWebhookSecret(workflow));
      },
      webhookPort: async () => {
        ensureStarted();
        const v = this.tables.setting('webhook.port');
        return v === undefined ? undefined : Number(v);
      },
      saveWebhookPort: async (port) => {
        ensureStarted();
        await this.queue.enqueue(() => this.tables.setSetting('webhook.port', String(port)));
      },
      rescan: async () => {
        ensureStarted();
        rescan();
      },
    };
  }
}

/** A TriggerState usable before start: every call checks the engine is started, then
 *  goes to the state built at start. */
export function lateTriggerState(get: () => TriggerState): TriggerState {
  return {
    listEvents: (filter) => get().listEvents(filter),
    listSchedules: () => get().listSchedules(),
    listSlots: (filter) => get().listSlots(filter),
    webhookSecret: (workflow) => get().webhookSecret(workflow),
    webhookPort: () => get().webhookPort(),
    saveWebhookPort: (port) => get().saveWebhookPort(port),
    rescan: () => get().rescan(),
  };
}
