// `npm run bench -- --peers [--quick] [--docs | --no-docs] [--peer-systems=ours,dbos,cf]`:
// the peer comparison alone, in its own sitting (the engine's own rows: `npm run bench`).
// Prints the table, writes bench/results/<time>-peers[-quick].json and, in the full mode (or
// with --docs), docs/bench/peers.md and docs/bench/peers.svg.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './children.ts';
import { benchPeers, PEER_SYSTEMS } from './peers.ts';
import { aggregate, peersChart, peersTable } from './peers-report.ts';

export async function peersMain(o: { argv: string[]; quick: boolean; docs: boolean; root: string; log: (s: string) => void; machine: Record<string, unknown> }): Promise<number> {
  const started = new Date();
  const arg = o.argv.find((a) => a.startsWith('--peer-systems='));
  const only = arg ? new Set(arg.slice('--peer-systems='.length).split(',')) : undefined;
  const unknown = [...(only ?? [])].filter((s) => !(PEER_SYSTEMS as readonly string[]).includes(s));
  if (unknown.length) {
    console.error(`--peer-systems: unknown ${unknown.join(', ')} (known: ${PEER_SYSTEMS.join(', ')})`);
    return 2;
  }
  // Every store (and the Postgres data dir) lives under the temp dir: on tmpfs an fsync is
  // free and the figures say nothing about a disk.
  let fsType = 'unknown';
  try { fsType = execFileSync('stat', ['-f', '-c', '%T', tmpdir()], { encoding: 'utf8' }).trim(); } catch { /* not linux */ }
  if (fsType === 'tmpfs') o.log(`peers: warning: the temp dir ${tmpdir()} is tmpfs (fsync costs nothing there); set TMPDIR to a disk for figures`);
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const run = await benchPeers({ quick: o.quick, root: o.root, log: o.log, only });
  const measured = run.systems.filter((s) => !run.na[s]);
  if (!measured.length) return 1; // each refusal was logged, one line per system
  // The load at the end too: a sitting that started quiet may not have stayed so.
  const loadEnd = loadavg().map((x) => x.toFixed(2)).join(' ');
  const rows = aggregate(run);
  const m = o.machine;
  const command = `npm run bench -- --peers${o.quick ? ' --quick' : ''}${arg ? ` ${arg}` : ''}`;
  const machineLine = `${started.toISOString().slice(0, 16)}Z, \`${command}\`, ${String(m.nproc)} cores (${String(m.cpuModel)}), ${String(m.memGiB)} GiB, Node ${String(m.node)}, load average at start ${load}, at the end ${loadEnd}, stores in ${tmpdir()} (${fsType})${m.commit ? `, commit ${String(m.commit)}` : ''}; ${Object.entries(run.versions).map(([k, v]) => `${k} ${v}`).join(', ')}`;
  const table = peersTable(run, rows);
  const text = [
    `Peers (${o.quick ? 'quick smoke: small sizes, few repetitions; not figures to quote' : 'full'}): ${machineLine}.`,
    `Same workflow on every system: 10 steps returning ~200 bytes of JSON each, every step fsync'd (ours: SQLite WAL, synchronous=FULL; DBOS: Postgres fsync=on, synchronous_commit=on; Cloudflare: miniflare's on-disk persistence). Each figure is a fresh child process on a fresh store; repetitions alternate the systems; a ratio is ours against the peer within one repetition, per step where step counts differ.`,
    '',
    table,
  ].join('\n');
  console.log(text);
  mkdirSync(join(REPO, 'bench', 'results'), { recursive: true });
  const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const file = join(REPO, 'bench', 'results', `${stamp}-peers${o.quick ? '-quick' : ''}.json`);
  writeFileSync(file, JSON.stringify({ startedAt: started.toISOString(), command, machine: m, loadAtStart: load, loadAtEnd: loadEnd, ...run, rows, table }, null, 1) + '\n');
  o.log(`wrote ${file}`);
  if (o.docs) {
    const dir = join(REPO, 'docs', 'bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'peers.svg'), peersChart(run, rows, `${started.toISOString().slice(0, 16)}Z · ${String(m.nproc)} cores · median of per-repetition ratios, whiskers min–max`));
    writeFileSync(join(dir, 'peers.md'), `# Peers: the latest \`--peers\` run\n\nWritten by \`${command}\` (bench/lib/peers-main.ts); raw JSON: \`bench/results/${stamp}-peers${o.quick ? '-quick' : ''}.json\`.\n\n${text}\n\n![ours against the peers](peers.svg)\n`);
    o.log(`wrote ${join(dir, 'peers.md')}, ${join(dir, 'peers.svg')}`);
  }
  return 0;
}
