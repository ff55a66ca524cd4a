// The checkpoint worker's own code: what runs on the worker thread that checkpoints the
// owner's WAL (started by checkpoint-thread.ts). It holds a second better-sqlite3 connection
// to the same file and, per request, does the whole verified-mark step (verified-mark.ts):
//   1. the file must still have the identity last recorded; if not, the mark is deleted and
//      never written again by this engine (disown);
//   2. PRAGMA wal_checkpoint(PASSIVE) at synchronous=FULL: SQLite syncs the -wal before it
//      copies frames into the file, and syncs the file after (the main connection's commits
//      go on meanwhile: PASSIVE takes no writer lock, and never changes the wal-index header,
//      so a main-thread transaction that began reading before it can still write after it).
//      A request marked `final` runs while the main thread holds its group commits: it copies
//      the frames left and, when none is left, restarts the -wal itself (restart() below);
//   3. the file's new identity is written to the mark (temp file, then renamed over it).
// Doing 1-3 here, back to back, keeps the window in which a SIGKILL leaves a mark that no
// longer matches the file to the checkpoint itself (then the next start runs the full check).
//
// The code is a CommonJS script in a string, run with `new Worker(source, { eval: true })`:
// the same text then runs under the sources (tsx, vitest), from the esbuild bundle and from an
// installed package, without a worker file to locate next to whichever chunk loads this one.
// It cannot import store.ts, so identity() is repeated here (crash-start.test.ts checks that a
// mark written here is vouched for by store.ts' identity()).
//
// Test-only fault point (env, since the worker has no FaultPoints registry; see
// fault-points.ts): TRANQUIL_FAULT_CHECKPOINT=hold-before-mark makes the worker, after its
// checkpoint changed the file and before the mark is written, post 'held' to the main thread
// and wait there (up to 10 min), so a test can SIGKILL the process mid-checkpoint (first
// passes only: a final pass holds the group commit, which the test needs running).

/** The script (CommonJS, plain JavaScript). workerData: { file, driver, abandoned }. */
export const CHECKPOINT_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { renameSync, statSync, unlinkSync, writeFileSync } = require('node:fs');
const file = workerData.file;
const mark = file + '.verified';
// [0] = 1 once the engine was abandoned (a simulated crash): no mark is written after that.
const abandoned = new Int32Array(workerData.abandoned);
const hold = process.env.TRANQUIL_FAULT_CHECKPOINT === 'hold-before-mark';

// Housekeeping: below the host's own threads when they compete for a core (Linux keeps a nice
// value per thread; /proc/thread-self names this one). Elsewhere it runs at the host's priority.
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) require('node:os').setPriority(tid, 10);
} catch { /* not Linux: same priority as the host */ }

function identity() {
  try {
    const st = statSync(file, { bigint: true });
    return st.dev + ':' + st.ino + ':' + st.size + ':' + st.ctimeNs;
  } catch {
    return undefined;
  }
}

function disown() {
  try { unlinkSync(mark); } catch { /* already gone */ }
  return true;
}

let db;
try {
  const Database = require(workerData.driver);
  db = new Database(file, { fileMustExist: true });
  // The worker may wait for a lock (it is not the host's event loop); PASSIVE itself never waits.
  db.pragma('busy_timeout = 2000');
  // Only this connection's explicit checkpoints; FULL: the -wal and the file are synced around it.
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('synchronous = FULL');
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  parentPort.postMessage({ type: 'failed', message: String(err && err.message || err) });
  try { db && db.close(); } catch {}
  parentPort.close();
}

// SQLite restarts the -wal from its start at the first write after a checkpoint copied every
// frame, and first syncs the new -wal header (before any new frame: https://sqlite.org/src/info/ff5be73dee).
// Left to the main connection's next group commit, that fsync ran on the host's event loop
// once per checkpoint (~0.5-1.5 ms). So this connection makes that first write: it rewrites
// user_version with the value it has (one frame of page 1, no change to the data or the
// schema) at NORMAL (only the header is synced; the frame means nothing if lost). IMMEDIATE:
// it waits for a writer rather than failing on a stale snapshot.
let rewriteVersion;
function restart() {
  rewriteVersion ??= db.transaction(() => {
    const v = db.pragma('user_version', { simple: true });
    db.pragma('user_version = ' + Number(v));
  });
  db.pragma('synchronous = NORMAL');
  try {
    rewriteVersion.immediate();
    return true;
  } catch {
    return false; // not fatal: the main connection's next commit restarts the -wal, as before
  } finally {
    db.pragma('synchronous = FULL');
  }
}

function checkpoint(req) {
  let disowned = req.disowned;
  let last = req.last;
  if (!disowned && identity() !== last) disowned = disown();
  const pass = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
  let r;
  try {
    // Frames committed while a pass ran are caught up while passes find new ones (a final
    // pass runs while the main thread holds its group commit: it catches up in one).
    r = pass();
    for (let i = 1; i < 4 && !req.final; i++) {
      const again = pass();
      const grew = again.log !== r.log;
      r = again;
      if (!grew) break;
    }
  } catch (err) {
    // The file may have changed part way: the mark is not renewed (a later checkpoint will).
    return { type: 'error', message: String(err && err.message || err), code: err && err.code, last, disowned };
  }
  const restarted = req.final && r.log > 0 && r.checkpointed === r.log && restart();
  if (hold && !req.final) {
    parentPort.postMessage({ type: 'held' });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600000);
  }
  if (!disowned && Atomics.load(abandoned, 0) === 0) {
    const now = identity();
    if (now === undefined) disowned = disown();
    else {
      try {
        writeFileSync(mark + '.tmp', now, { mode: 0o600 });
        renameSync(mark + '.tmp', mark);
        last = now;
      } catch {
        disowned = disown();
      }
    }
  }
  return { type: 'done', last, disowned, log: r.log, checkpointed: r.checkpointed, busy: r.busy, restarted };
}

parentPort.on('message', (req) => {
  if (req.type === 'close') {
    try { db.close(); } catch {}
    parentPort.close();
    return;
  }
  parentPort.postMessage(checkpoint(req));
});
`;
