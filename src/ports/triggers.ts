// What the engine facade and the CLI read about triggers: the event inbox, schedules and
// their slot ledger, webhook secrets. Every backend exposes it as `executor.triggers`
// (built over its TriggerStore by src/runtime/trigger-state.ts).
import type { Json } from '../domain/json.ts';
import type { CatchUpPolicy, SlotFacts, SlotFate } from '../domain/schedule.ts';

/** An event in the inbox (engine.events.list). */
export interface EventView {
  /** Its dedup id: emit's `options.id`, or a generated one. */
  id: string;
  name: string;
  payload: Json;
  createdAt: string;
  /** Runs the event started; empty = no subscriber when it was published (kept, not dropped). */
  runIds: string[];
}

/** engine.events.list's filter; `limit` at most 10,000. */
export interface EventFilter {
  name?: string;
  /** Only events that started no run. */
  unmatched?: boolean;
  limit?: number;
}

/** A schedule trigger as the engine keeps it (engine.schedules.list). */
export interface ScheduleView {
  workflow: string;
  cron: string;
  timezone: string;
  catchUp: CatchUpPolicy;
  /** False when the workflow or this schedule is no longer registered. */
  active: boolean;
  createdAt: string;
  /** The newest slot already decided (fired, caught up, missed or skipped). */
  handledUpTo: string;
  nextAt?: string;
}

/** A slot's recorded fate (SlotFacts: slot, fate, reason, runId, count, until) and where. */
export interface SlotView extends SlotFacts {
  workflow: string;
  recordedAt: string;
}

/** engine.schedules.slots's filter; `limit` at most 10,000. */
export interface SlotFilter {
  workflow?: string;
  fate?: SlotFate;
  limit?: number;
}

export interface TriggerState {
  listEvents(filter: EventFilter): Promise<EventView[]>;
  listSchedules(): Promise<ScheduleView[]>;
  /** Newest first. */
  listSlots(filter: SlotFilter): Promise<SlotView[]>;
  /** The workflow's webhook secret, minted (32 random bytes, base64url) on first call. */
  webhookSecret(workflow: string): Promise<string>;
  /** The port the webhook listener bound last time, if recorded. */
  webhookPort(): Promise<number | undefined>;
  saveWebhookPort(port: number): Promise<void>;
  /** A durable engine setting (the lifecycle notifier's ledger: runtime/notifier.ts). */
  setting(key: string): Promise<string | undefined>;
  saveSettings(entries: [key: string, value: string][]): Promise<void>;
  /** Re-scans due runs and schedule slots now (after a wall-clock jump or a resume signal). */
  rescan(): Promise<void>;
}
