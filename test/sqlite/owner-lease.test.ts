// The owner lease's heartbeat (src/adapters/sqlite/owner-lease.ts): beats keep moving the
// owner row, and the beat's relaxed sync level (NORMAL, so no fsync on the host's event loop)
// is put back after each one: every other commit of the connection keeps the level it chose.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { OwnerLease } from '../../src/adapters/sqlite/owner-lease.ts';
import { openDatabase } from '../../src/adapters/sqlite/store.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const beatAt = (db: ReturnType<typeof openDatabase>) =>
  (db.prepare('SELECT heartbeat_at AS at FROM owner WHERE id = 1').get() as { at: number }).at;

it.each([
  ['full', 2],
  ['normal', 1],
] as const)('at durability %s the heartbeat advances and the connection stays at synchronous=%i', async (durability, level) => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-lease-'));
  dirs.push(dir);
  const db = openDatabase(dir, durability);
  expect(db.pragma('synchronous', { simple: true })).toBe(level);
  const lease = new OwnerLease(db, 'owner-a', 600); // a beat every 200 ms
  lease.acquire();
  const first = beatAt(db);
  await new Promise((r) => setTimeout(r, 30));
  const deadline = Date.now() + 5_000;
  while (beatAt(db) === first && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(beatAt(db)).toBeGreaterThan(first);
  expect(db.pragma('synchronous', { simple: true })).toBe(level);
  lease.release();
  db.close();
}, 20_000);
