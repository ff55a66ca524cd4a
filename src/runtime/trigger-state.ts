// The TriggerState the engine facade reads (events, schedules, slots, webhook secrets and
// port, rescan), built over the TriggerStore port, and what an engine writes into that store
// at start: its schedules and the webhook secrets of its webhook workflows. Shared by both
// backends.
import { nodeCrypto } from './node-crypto.ts';
import type { TriggerState } from '../ports/triggers.ts';
import type { TriggerStore, TriggerWrites } from '../ports/trigger-store.ts';
import type { WorkflowRegistry } from './registry.ts';
import type { SlotFiring } from './slot-firing.ts';

const WEBHOOK_PORT = 'webhook.port';

/** A workflow's webhook secret, minted (32 random bytes, base64url) if it has none yet. */
export function mintWebhookSecret(w: TriggerWrites, workflow: string, now: number): string {
  const existing = w.webhookSecret(workflow);
  if (existing) return existing;
  w.insertWebhookSecret(workflow, nodeCrypto().randomBytes(32).toString('base64url'), now);
  return w.webhookSecret(workflow)!;
}

/** Inside a write at start: schedules registered, and webhook secrets minted at first
 *  registration, so a webhook URL is stable from then on. */
export function registerTriggers(w: TriggerWrites, registry: WorkflowRegistry, slots: SlotFiring, now: number): void {
  slots.register(w, now);
  for (const wf of registry.all()) {
    if (wf.definition.triggers.some((t) => t.type === 'webhook')) mintWebhookSecret(w, wf.definition.name, now);
  }
}

export interface TriggerStateHooks {
  /** Throws unless the engine is started (every call checks). */
  ensureStarted(): void;
  /** Re-scans due runs and schedule slots (the Scheduler). */
  rescan(): Promise<void>;
  now(): number;
}

/** The TriggerState port over a store. Usable before start: every call checks first. */
export function triggerState(store: TriggerStore, h: TriggerStateHooks): TriggerState {
  return {
    listEvents: async (filter) => (h.ensureStarted(), store.listEvents(filter)),
    listSchedules: async () => (h.ensureStarted(), store.listSchedules()),
    listSlots: async (filter) => (h.ensureStarted(), store.listSlots(filter)),
    webhookSecret: async (workflow) => {
      h.ensureStarted();
      return store.write((w) => mintWebhookSecret(w, workflow, h.now()));
    },
    webhookPort: async () => {
      h.ensureStarted();
      const v = await store.setting(WEBHOOK_PORT);
      return v === undefined ? undefined : Number(v);
    },
    saveWebhookPort: async (port) => {
      h.ensureStarted();
      await store.write((w) => w.setSetting(WEBHOOK_PORT, String(port)));
    },
    setting: async (key) => (h.ensureStarted(), store.setting(key)),
    saveSettings: async (entries) => {
      h.ensureStarted();
      if (entries.length) await store.write((w) => entries.forEach(([k, v]) => w.setSetting(k, v)));
    },
    rescan: async () => {
      h.ensureStarted();
      await h.rescan();
    },
  };
}
