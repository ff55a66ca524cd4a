// How busy the machine was over an interval, from /proc (Linux): the share of CPU time the
// hypervisor gave to other guests (steal), the share spent busy, and the load average. Benches
// print it beside figures taken on a shared machine, so a reader can weigh each one.
import { readFileSync } from 'node:fs';

export interface CpuTimes { total: number; idle: number; steal: number }

/** The aggregate `cpu` line of /proc/stat, in clock ticks. */
export function cpuTimes(): CpuTimes {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f as [number, number, number, number, number, number, number, number];
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, idle: idle + iowait, steal };
}

/** 1-minute load average. */
export const loadAvg1 = (): number => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** Steal and busy percentages between two samples. */
export function cpuShare(from: CpuTimes, to: CpuTimes): { stealPct: number; busyPct: number } {
  const d = to.total - from.total || 1;
  return { stealPct: (100 * (to.steal - from.steal)) / d, busyPct: (100 * (d - (to.idle - from.idle))) / d };
}
