// Reads across a drain (docs/restate.md, "Switching a data dir from SQLite"): while the runs
// SQLite started before the switch finish on the data dir's file, every other run is on
// Restate. One view over both, used by the engine (drain-router.ts) and by the CLI's reader
// (compose/run-reader.ts), so `runs list`, `why` and `result()` answer for both and each view
// says which backend holds its run (`heldBy`).
import { ValidationError } from '../domain/errors.ts';
import type { ChildOutput, RunFilter, RunPage, RunView } from '../domain/run-view.ts';

export interface RunReads {
  getRun(runId: string): Promise<RunView | undefined>;
  listRuns(filter: RunFilter): Promise<RunPage>;
  childOutput?(runId: string): Promise<ChildOutput | undefined>;
}

/** A drained run's id is in `drained`; everything else is the primary's (Restate). */
export class DrainReads implements RunReads {
  constructor(
    private readonly primary: RunReads,
    private readonly local: RunReads,
    private readonly drained: ReadonlySet<string>,
  ) {}

  holds(runId: string): boolean {
    return this.drained.has(runId);
  }

  async childOutput(runId: string): Promise<ChildOutput | undefined> {
    return (this.drained.has(runId) ? this.local : this.primary).childOutput?.(runId);
  }

  async getRun(runId: string): Promise<RunView | undefined> {
    if (this.drained.has(runId)) return held(await this.local.getRun(runId), 'sqlite');
    return held(await this.primary.getRun(runId), 'restate');
  }

  /** The primary's page, with the drained runs created within the same span of time
   *  merged in, newest first. The drain set is small (the runs in flight at the switch), so
   *  they are read one by one and filtered here; a page may hold more than `limit` runs by
   *  the drained ones in its span. The cursor carries the primary's and the span's end. */
  async listRuns(filter: RunFilter): Promise<RunPage> {
    const at = decodeCursor(filter.cursor);
    const page = await this.primary.listRuns({ ...filter, cursor: at?.p });
    const runs = page.runs.map((v) => held(v, 'restate')!);
    const last = runs.at(-1);
    // This page covers [lower, upper): from the oldest run shown (or the beginning of time
    // on the last page) to where the previous page ended.
    const lower = page.next !== undefined && last ? last.createdAt : undefined;
    const upper = at?.before;
    const mine: RunView[] = [];
    for (const id of this.drained) {
      const v = await this.local.getRun(id);
      if (!v || !matches(v, filter)) continue;
      if (upper !== undefined && !(v.createdAt < upper)) continue;
      if (lower !== undefined && v.createdAt < lower) continue;
      mine.push({ ...held(v, 'sqlite')!, steps: [] });
    }
    const merged = mine.length === 0 ? runs : [...runs, ...mine].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    return { runs: merged, next: page.next === undefined ? undefined : encodeCursor({ p: page.next, before: lower! }) };
  }
}

function held(v: RunView | undefined, by: 'sqlite' | 'restate'): RunView | undefined {
  return v && { ...v, heldBy: by };
}

function matches(v: RunView, f: RunFilter): boolean {
  if (f.status !== undefined && v.status !== f.status) return false;
  if (f.workflow !== undefined && v.workflow !== f.workflow) return false;
  if (f.since !== undefined && Date.parse(v.createdAt) < Date.parse(f.since)) return false;
  if (f.until !== undefined && Date.parse(v.createdAt) > Date.parse(f.until)) return false;
  return true;
}

interface DrainCursor {
  /** The primary backend's own cursor. */
  p: string;
  /** createdAt of the oldest run the previous page showed: drained runs before it come next. */
  before: string;
}

const PREFIX = 'd1.';

function encodeCursor(c: DrainCursor): string {
  return PREFIX + Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(cursor: string | undefined): DrainCursor | undefined {
  if (cursor === undefined) return undefined;
  if (!cursor.startsWith(PREFIX)) return { p: cursor, before: '\uffff' };
  try {
    const c = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString()) as DrainCursor;
    if (typeof c.p === 'string' && typeof c.before === 'string') return c;
  } catch {
    // falls through to the one-line refusal
  }
  throw new ValidationError(`runs.list: cursor '${cursor.slice(0, 40)}' is not one this engine gave out`);
}
