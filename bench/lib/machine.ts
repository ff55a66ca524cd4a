import { cpus, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export function machineInfo(): Record<string, unknown> {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    const m = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
    if (m) cpuModel = m[1]!.trim();
  } catch { /* not linux */ }
  let sqlite = 'unknown';
  return {
    nproc: availableParallelism(),
    cpuModel,
    memGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    sqlite,
  };
}
