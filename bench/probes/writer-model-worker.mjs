// The writer thread of bench/probes/writer-model.ts: owns the connection, commits each batch
// at synchronous=FULL (fsync inline, on this thread) and answers with the batch's id.
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const stmts = Object.fromEntries(Object.entries(workerData.writes).map(([k, sql]) => [k, db.prepare(sql)]));
const tx = db.transaction((ops) => {
  for (const [k, ...args] of ops) stmts[k].run(...args);
});
parentPort.on('message', (m) => {
  tx(m.ops);
  parentPort.postMessage(m.id);
});
parentPort.postMessage('ready');
