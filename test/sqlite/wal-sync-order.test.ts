// "Nothing acknowledged before it is durable" with the fsync on the thread pool (wal-sync.ts),
// checked where a SIGKILL test cannot see it (the page cache survives a killed process): under
// strace, every frame written to the -wal before an answer is followed by an fdatasync of the
// -wal, and that fdatasync returns before the answer is given.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./fixtures/ack-order-child.ts', import.meta.url));
const hasStrace = spawnSync('strace', ['-V']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'tranquil-ack-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.skipIf(!hasStrace)('an answer comes only after an fdatasync of every -wal frame before it (needs strace)', () => {
  const trace = join(dir, 'trace.txt');
  const r = spawnSync('strace', ['-f', '-y', '-e', 'trace=pwrite64,fdatasync,fsync,write', '-o', trace, process.execPath, '--import', 'tsx', CHILD, join(dir, 'data')], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  // strace -f splits a syscall that another thread interrupts into "<unfinished ...>" and
  // "<... fdatasync resumed>" lines: a sync covers the -wal writes made before it STARTED.
  let written = 0; // -wal writes so far
  let durable = 0; // -wal writes covered by a completed sync
  const started = new Map<string, number>(); // pid -> writes when its sync started
  const acks: { ack: string; unsynced: number }[] = [];
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const pid = line.split(/\s+/)[0]!;
    if (/pwrite64\(\d+<[^>]*tranquil\.db-wal>/.test(line)) written++;
    else if (/f(data)?sync\(\d+<[^>]*tranquil\.db-wal>\)\s*= 0/.test(line)) durable = Math.max(durable, written);
    else if (/f(data)?sync\(\d+<[^>]*tranquil\.db-wal> <unfinished/.test(line)) started.set(pid, written);
    else if (/<\.\.\. f(data)?sync resumed>\)\s*= 0/.test(line) && started.has(pid)) {
      durable = Math.max(durable, started.get(pid)!);
      started.delete(pid);
    } else if (/write\(2<[^>]*>, "ACK \d/.test(line)) acks.push({ ack: /ACK (\d)/.exec(line)![1]!, unsynced: written - durable });
  }
  expect(acks).toEqual([{ ack: '0', unsynced: 0 }, { ack: '1', unsynced: 0 }, { ack: '2', unsynced: 0 }]);
  // And the sync was the pool's (the ack path did not fall back to SQLite's own FULL commit).
  // (strace prints a sync another thread interrupted as "<unfinished ...>": either form counts.)
  expect(readFileSync(trace, "utf8")).toMatch(/fdatasync\(\d+<[^>]*tranquil\.db-wal>(\)| <unfinished)/);
});
