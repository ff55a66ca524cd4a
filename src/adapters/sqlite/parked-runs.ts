// The runs parked on a capability step (step.use with no eligible provider), read from the
// run and step rows themselves: a suspended run with a `use` step in status `parked` (the run
// shows `waiting` instead when another branch waits for a signal, `parked` otherwise); the
// step's recorded error names the capability and affinity (domain/capability.ts). No table of its
// own: the park is committed with the run's suspension, in the same transaction.
import type Database from 'better-sqlite3';
import { parkOf, type Attrs } from '../../domain/capability.ts';
import type { ErrorInfo } from '../../domain/errors.ts';

export class ParkedRuns {
  private readonly parked;

  constructor(db: Database.Database) {
    this.parked = db.prepare(`SELECT r.run_id AS run_id, s.error AS error FROM runs r JOIN steps s ON s.run_seq = r.created_seq
                              WHERE r.status IN ('parked', 'waiting', 'sleeping', 'retrying') AND s.kind = 'use' AND s.status = 'parked'
                              ORDER BY r.created_seq`);
  }

  /** Runs parked on `capability` with an affinity that `matches` accepts (each run once). */
  waitingOn(capability: string, matches: (affinity: Attrs) => boolean): string[] {
    const ids = new Set<string>();
    for (const row of this.parked.all() as { run_id: string; error: string | null }[]) {
      const park = parkOf(row.error == null ? undefined : (JSON.parse(row.error) as ErrorInfo));
      if (park && park.capability === capability && matches(park.affinity)) ids.add(row.run_id);
    }
    return [...ids];
  }
}
