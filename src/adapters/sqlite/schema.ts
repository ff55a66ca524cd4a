// Schema migrations, versioned in code by PRAGMA user_version. Each entry runs once,
// in order, inside one transaction with the version bump.
import type { Database } from 'better-sqlite3';

export const MIGRATIONS: readonly string[] = [
  /* 1 */ `
  CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    wake_at INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_seq INTEGER NOT NULL
  );
  CREATE INDEX runs_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX runs_newest ON runs (created_seq DESC);
  CREATE INDEX runs_status ON runs (status, created_seq DESC);
  CREATE TABLE steps (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    result TEXT,
    error TEXT,
    started_at INTEGER,
    ended_at INTEGER,
    wake_at INTEGER,
    next_retry_at INTEGER,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    consumed_seq INTEGER
  );
  CREATE INDEX signals_open ON signals (run_id, name, id) WHERE consumed_seq IS NULL;
  CREATE TABLE events (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    run_ids TEXT NOT NULL
  );
  CREATE INDEX events_name ON events (name, created_at);
  CREATE TABLE owner (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    owner_id TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    heartbeat_at INTEGER NOT NULL
  );
  `,
  /* 2: triggers: schedules + slot ledger (every slot's fate), webhook secrets, settings */ `
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    catch_up TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    handled_up_to INTEGER NOT NULL,
    next_at INTEGER,
    active INTEGER NOT NULL DEFAULT 1
  );
  CREATE INDEX schedules_next ON schedules (next_at) WHERE active = 1;
  CREATE TABLE schedule_slots (
    schedule_id TEXT NOT NULL,
    slot_at INTEGER NOT NULL,
    fate TEXT NOT NULL,
    reason TEXT NOT NULL,
    run_id TEXT,
    count INTEGER NOT NULL DEFAULT 1,
    until_at INTEGER,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (schedule_id, slot_at)
  ) WITHOUT ROWID;
  CREATE INDEX schedule_slots_at ON schedule_slots (slot_at);
  CREATE TABLE webhook_secrets (
    workflow TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  /* 3: journal rows appended in write order (rowid) and found by the run's integer
        created_seq, not its text run_id. Run ids are random (UUIDs), so the (run_id, seq)
        key scattered the steps of 100 concurrent runs over ~100 b-tree pages per commit;
        now a commit dirties a few tail pages of the table and of the (run_seq, seq) index.
        Measured: ~1.5x engine steps/s at 100 concurrent runs. Orphan step rows (no run)
        are unreachable by any API and are not carried over. A created_seq shared by two
        runs (possible before v3 only if a stalled owner kept writing after losing its
        lease) is renumbered past the largest one, rowid order, so the index can be unique. */ `
  UPDATE runs SET created_seq = (SELECT max(created_seq) FROM runs) + rowid
    WHERE EXISTS (SELECT 1 FROM runs o WHERE o.created_seq = runs.created_seq AND o.rowid < runs.rowid);
  CREATE UNIQUE INDEX runs_seq ON runs (created_seq);
  DROP INDEX runs_newest;
  CREATE TABLE steps_v3 (
    id INTEGER PRIMARY KEY,
    run_seq INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    result TEXT,
    error TEXT,
    started_at INTEGER,
    ended_at INTEGER,
    wake_at INTEGER,
    next_retry_at INTEGER
  );
  INSERT INTO steps_v3 (run_seq, seq, run_id, name, kind, status, attempts, result, error, started_at, ended_at, wake_at, next_retry_at)
    SELECT r.created_seq, s.seq, s.run_id, s.name, s.kind, s.status, s.attempts, s.result, s.error,
           s.started_at, s.ended_at, s.wake_at, s.next_retry_at
    FROM steps s JOIN runs r ON r.run_id = s.run_id ORDER BY r.created_seq, s.seq;
  DROP TABLE steps;
  ALTER TABLE steps_v3 RENAME TO steps;
  CREATE UNIQUE INDEX steps_run ON steps (run_seq, seq);
  `,
  /* 4: the order in which a run's steps completed (steps called concurrently finish in any
        order; a replay hands their results back in that order, so a Promise.race picks the
        same winner as the first execution). NULL for rows of older engines: unordered. */ `
  ALTER TABLE steps ADD COLUMN done_order INTEGER;
  `,
  /* 5: workflow files (issue 11, docs/runner.md): the approved permission declarations, by
        workflow name and declaration hash (every declaration ever approved for that name;
        the newest is the one a change is shown against), and the last Deno child's output
        of each run (bounded by the runner), for `runs describe`. */ `
  CREATE TABLE workflow_approvals (
    workflow TEXT NOT NULL,
    hash TEXT NOT NULL,
    declaration TEXT NOT NULL,
    approved_at INTEGER NOT NULL,
    PRIMARY KEY (workflow, hash)
  ) WITHOUT ROWID;
  CREATE TABLE run_output (
    run_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    exit TEXT,
    stdout TEXT NOT NULL,
    stderr TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  /* 6: retention (issue 13, docs/data.md): finished runs found by age, and a run's signals and
        old inbox events found without a table scan. The file's pages are given back
        incrementally (auto_vacuum = INCREMENTAL): see afterMigrations (one VACUUM). */ `
  CREATE INDEX runs_finished ON runs (updated_at) WHERE status IN ('succeeded', 'failed', 'cancelled');
  CREATE INDEX signals_run ON signals (run_id);
  CREATE INDEX events_created ON events (created_at);
  `,
  /* 7: the drain from SQLite to Restate (issue 12, docs/restate.md): the runs the SQLite
        backend started and had not finished when the data dir switched to Restate. The
        engine keeps executing them locally to the end; this table says which runs of the
        file are those (the rest are Restate's outbox). */ `
  CREATE TABLE drain_runs (
    run_id TEXT PRIMARY KEY,
    since INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  /* 8: what `why` says of a retrying or cancelled run (issue 15, docs/panel.md): a retrying
        step's attempt limit ("attempt n of m"), and who asked to cancel a run and when (the
        first cancel's asker). NULL for rows written before: `why` says it was not recorded. */ `
  ALTER TABLE steps ADD COLUMN retry_limit INTEGER;
  ALTER TABLE runs ADD COLUMN cancel_by TEXT;
  ALTER TABLE runs ADD COLUMN cancel_at INTEGER;
  `,
  /* 9: child runs (issue 40, docs/children.md): a run started by another run's step keeps
        its link here, written in the transaction that creates it (so a child never exists
        without it): the parent's run and step, the depth below the top-level run, and what a
        cancel of the parent does to it. Found by the parent for its views and cascades. */ `
  CREATE TABLE run_links (
    run_id TEXT PRIMARY KEY,
    parent_run_id TEXT NOT NULL,
    parent_step TEXT NOT NULL,
    depth INTEGER NOT NULL,
    on_parent_cancel TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX run_links_parent ON run_links (parent_run_id);
  `,
  /* 10: tracing (issue 42, docs/observability.md): the W3C trace context a run was started
         under; every execution's span is its child, so a run stays one trace across
         suspensions and restarts. NULL: started untraced (each execution is its own trace). */ `
  ALTER TABLE runs ADD COLUMN trace_parent TEXT;
  `,
  /* 11: run control (issue 41, docs/control.md): a run's deadline (its workflow's timeout or the
        trigger's override, fixed when the run is written), the run a rerun started from
        (linked both ways through the index), and who paused a paused run and when. The
        Restate backend's outbox rows are these rows too: its runs keep the same. */ `
  ALTER TABLE runs ADD COLUMN deadline_at INTEGER;
  ALTER TABLE runs ADD COLUMN rerun_of TEXT;
  ALTER TABLE runs ADD COLUMN pause_by TEXT;
  ALTER TABLE runs ADD COLUMN pause_at INTEGER;
  CREATE INDEX runs_rerun_of ON runs (rerun_of) WHERE rerun_of IS NOT NULL;
  `,
  /* 12: flow control (issue 39, docs/flow-control.md): each queue's limits as the engine last
         started with them (read by `tranquil queues`), the bodies and runs waiting for a slot in
         their order (`ord`; a run's own slot has step ''), the slots held, and the starts a
         rate limit counts; a waiting run's priority (higher first) orders its line. */ `
  CREATE TABLE queue_defs (
    name TEXT PRIMARY KEY,
    limits TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE queue_waiting (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    queue TEXT NOT NULL,
    key TEXT NOT NULL,
    ord INTEGER NOT NULL,
    at INTEGER NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, step)
  ) WITHOUT ROWID;
  CREATE INDEX queue_waiting_order ON queue_waiting (queue, ord);
  CREATE TABLE queue_slots (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    queue TEXT NOT NULL,
    key TEXT NOT NULL,
    ord INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (run_id, step)
  ) WITHOUT ROWID;
  CREATE TABLE queue_starts (
    queue TEXT NOT NULL,
    key TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX queue_starts_at ON queue_starts (queue, at);
  `,
  /* 13 */ `
  CREATE TABLE debounce_pending (
    workflow TEXT NOT NULL,
    key TEXT NOT NULL,
    run_id TEXT NOT NULL UNIQUE,
    input TEXT NOT NULL,
    first_at INTEGER NOT NULL,
    due_at INTEGER NOT NULL,
    traceparent TEXT,
    PRIMARY KEY (workflow, key)
  ) WITHOUT ROWID;
  CREATE INDEX debounce_due ON debounce_pending (due_at);
  `,
  /* 14: runs.fork (issue 41, docs/control.md): the step a fork runs fresh from (JSON
         {seq, name}; its link to the original is rerun_of), and, on the Restate backend's
         outbox rows only, the recorded steps it starts with (JSON, through the payload codec)
         until Restate has the run: a SQLite run keeps them as its steps rows. */ `
  ALTER TABLE runs ADD COLUMN fork_from TEXT;
  ALTER TABLE runs ADD COLUMN fork_steps TEXT;
  `,
  /* 15: workflows.pause (issue 41, docs/control.md): a paused workflow (read in the
         transaction that creates each run, so a run created while paused is born paused),
         and which paused runs are held by it (pause_held = 1) rather than paused one by one. */ `
  CREATE TABLE workflow_pauses (
    workflow TEXT PRIMARY KEY,
    paused_by TEXT NOT NULL,
    paused_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  ALTER TABLE runs ADD COLUMN pause_held INTEGER;
  `,
  /* 16: runs listed by workflow (issue 44, bench/scale-runs.ts). `runs list --workflow`
         (the panel's and engine.runs.list's filter too) walked runs_seq or runs_status
         newest first and skipped every run of another workflow: the page of a workflow with
         few runs read the whole table (measured: 0.2 s at 10^5 runs, linear in the file).
         Now each filter is one index search in page order: the workflow's runs, or its runs
         in one status. Both, since an index on (workflow, status, ...) alone would make a
         workflow-only page sort all of that workflow's runs. Costs two index entries a run. */ `
  CREATE INDEX runs_workflow ON runs (workflow, created_seq DESC);
  CREATE INDEX runs_workflow_status ON runs (workflow, status, created_seq DESC);
  `,
  /* 17: debounce of event, schedule and webhook triggers (issue 39, docs/flow-control.md,
         Debounce): each such trigger once per dedup id (the event's run id, the slot's, the
         webhook delivery's Idempotency-Key), with the burst it joined (joined_run; NULL: not
         joined yet, the Restate backend forwards it after the write and again at start), and
         a burst's count of triggers collected. */ `
  CREATE TABLE debounce_triggers (
    dedup_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    key TEXT NOT NULL,
    input TEXT NOT NULL,
    period_ms INTEGER NOT NULL,
    max_wait_ms INTEGER,
    run_id TEXT NOT NULL,
    traceparent TEXT,
    joined_run TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX debounce_triggers_unjoined ON debounce_triggers (created_at) WHERE joined_run IS NULL;
  CREATE INDEX debounce_triggers_age ON debounce_triggers (created_at);
  ALTER TABLE debounce_pending ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
  `,
];

/** Version from which the file must be in auto_vacuum = INCREMENTAL mode. */
const INCREMENTAL_VACUUM_FROM = 6;

/** A file created before that mode was set switches with one VACUUM (SQLite applies a new
 *  auto_vacuum mode only by rebuilding the file). Run outside any transaction, by the owner,
 *  on every full open until it took: a crash mid-VACUUM leaves the old file intact (the WAL
 *  makes it atomic), and the next open does it again. A file created now gets the mode
 *  before its first table, so its VACUUM is of an empty file. */
function afterMigrations(db: Database): void {
  if ((db.pragma('user_version', { simple: true }) as number) < INCREMENTAL_VACUUM_FROM) return;
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
}

/** Applies the migrations up to `target` (all by default). */
export function migrate(db: Database, target = MIGRATIONS.length): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this engine understands (${MIGRATIONS.length})`);
  }
  if (current === 0) {
    const foreign = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number };
    if (foreign.n > 0) throw new Error('database holds tables that are not a Tranquil schema');
  }
  // A new file takes incremental auto-vacuum before its first table (no rebuild needed).
  if (current === 0 && target > 0) db.pragma('auto_vacuum = INCREMENTAL');
  for (let v = current; v < target; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  if (target === MIGRATIONS.length) afterMigrations(db);
}
