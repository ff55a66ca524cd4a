// Capability steps parked on Restate (issue 16, docs/host.md): a run whose step.use found no
// eligible provider suspends on an awakeable; its id and what it waits for are in the run's
// workflow state `~park` ({ awakeable, parks }). The engine resolves the awakeable (with the
// time, which the run's clock moves to) when a matching provider is registered: the run then
// calls the provider again from its own journaled attempt, as on SQLite. Found in-process
// when the handler parked in this engine, through the admin SQL after a restart.
import { contains, type Attrs } from '../../domain/capability.ts';
import type { AdminApi } from './admin-api.ts';
import { sqlString } from './admin-api.ts';
import { httpJson } from './http-json.ts';

export interface Park {
  capability: string;
  affinity: Attrs;
}

/** The `~park` state of a parked run. */
export interface ParkState {
  awakeable: string;
  parks: Park[];
}

export interface ParkedAwakeablesOptions {
  admin(): AdminApi;
  ingress(): string;
  /** The workflow services (tq_<x>) whose state is searched. */
  services: string[];
  eligible(capability: string, affinity: Attrs): boolean;
  onError(message: string): void;
}

export class ParkedAwakeables {
  /** Parks this process saw the handler make, by run id (the newest per run). */
  private readonly known = new Map<string, ParkState>();

  constructor(private readonly o: ParkedAwakeablesOptions) {}

  /** The handler parked `runId` on `awakeable`: resolved at once if a provider appeared
   *  between the step's look and now. */
  parked(runId: string, state: ParkState): void {
    this.known.set(runId, state);
    if (state.parks.some((p) => this.o.eligible(p.capability, p.affinity))) void this.resolve(runId, state.awakeable);
  }

  /** Resolves every parked run waiting on `capability` with an affinity `attrs` contains. */
  async wake(capability: string, attrs: Attrs): Promise<void> {
    const found = new Map(this.known);
    if (this.o.services.length > 0) {
      const rows = await this.o.admin().query<{ run_id: string; value_utf8: string | null }>(
        `SELECT service_key AS run_id, value_utf8 FROM state WHERE key = '~park' AND service_name IN (${this.o.services.map(sqlString).join(',')})`,
      );
      for (const r of rows) if (r.value_utf8) found.set(r.run_id, JSON.parse(r.value_utf8) as ParkState);
    }
    const matching = [...found].filter(([, s]) => s.parks.some((p) => p.capability === capability && contains(attrs, p.affinity)));
    await Promise.all(matching.map(([runId, s]) => this.resolve(runId, s.awakeable)));
  }

  private async resolve(runId: string, awakeable: string): Promise<void> {
    if (this.known.get(runId)?.awakeable === awakeable) this.known.delete(runId);
    const res = await httpJson('POST', `${this.o.ingress()}/restate/awakeables/${encodeURIComponent(awakeable)}/resolve`, { t: Date.now() });
    // Already resolved (a wake raced another) or the run finished: nothing to do.
    if (!res.ok && res.status !== 404 && res.status !== 409) this.o.onError(`resolving the park of run ${runId} failed (${res.status}): ${res.text.slice(0, 200)}`);
  }
}
