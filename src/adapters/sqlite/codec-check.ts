// Checks the configured payload codec against the data dir's file before anything is read or
// written with it: every key that sealed something here leaves a check value in `settings`
// (`codec.check.<keyId>`: a known text sealed with that key). Opening refuses, with one line
// and nothing changed, a file whose check values name a key that is not configured (a
// missing key, or no key at all) or that the configured key of that id cannot open (a wrong
// key). A key seen for the first time records its check value (record: true, owners only).
import type Database from 'better-sqlite3';
import { StorageError } from '../../domain/errors.ts';
import type { PayloadCodec } from '../../domain/payload-codec.ts';

const CHECK_PREFIX = 'codec.check.';
const CHECK_TEXT = '"tranquil payload codec check"';

export function checkCodec(db: Database.Database, codec: PayloadCodec, o: { record: boolean }): void {
  const hasSettings = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'`).get();
  if (!hasSettings) return;
  const rows = db.prepare(`SELECT key, value FROM settings WHERE key LIKE 'codec.check.%'`).all() as { key: string; value: string }[];
  const where = db.name;
  for (const r of rows) {
    const id = r.key.slice(CHECK_PREFIX.length);
    if (!codec.keyIds.includes(id)) {
      throw new StorageError(
        codec.keyIds.length === 0
          ? `${where}: payloads here are encrypted (key '${id}') but no encryption key is configured (set TRANQUIL_KEYS or encryption.keyFile); nothing was changed`
          : `${where}: payloads here are encrypted with key '${id}', which is not among the configured keys (${codec.keyIds.join(', ')}); keep old keys listed after the active one; nothing was changed`,
      );
    }
    let ok = false;
    try {
      ok = codec.decode(r.value) === CHECK_TEXT;
    } catch {
      ok = false;
    }
    if (!ok) throw new StorageError(`${where}: encryption key '${id}' is not the key this data dir was written with; nothing was changed`);
  }
  const active = codec.activeKeyId;
  if (!o.record || active === undefined || rows.some((r) => r.key === CHECK_PREFIX + active)) return;
  db.prepare(`INSERT INTO settings (key, value) VALUES (?, ?)`).run(CHECK_PREFIX + active, codec.encode(CHECK_TEXT));
}
