// Summarises a V8 .cpuprofile: top self-time functions, and self time grouped by area.
import { readFileSync } from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

function area(url: string, fn: string, repo: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native / V8 builtins)';
  const u = url.replace('file://', '');
  if (u.includes('/better-sqlite3/')) return 'better-sqlite3 (JS wrapper)';
  if (u.includes('/node_modules/')) return `node_modules/${u.split('/node_modules/').pop()!.split('/')[0]}`;
  if (u.startsWith('node:')) return 'node core';
  if (u.startsWith(repo)) return u.slice(repo.length + 1).split('/').slice(0, -1).join('/') || u.slice(repo.length + 1);
  return u;
}

export function summarizeProfile(file: string, repo: string, top = 10): { totalMs: number; top: unknown[]; byArea: unknown[]; text: string } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const totalUs = [...self.values()].reduce((a, b) => a + b, 0);
  const fnAgg = new Map<string, { fn: string; where: string; us: number }>();
  const areaAgg = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const fn = functionName || '(anonymous)';
    const where = url ? `${url.replace('file://', '').replace(repo + '/', '')}:${lineNumber + 1}` : '';
    const k = `${fn}@${where}`;
    const e = fnAgg.get(k) ?? { fn, where, us: 0 };
    e.us += us;
    fnAgg.set(k, e);
    const a = area(url, fn, repo);
    areaAgg.set(a, (areaAgg.get(a) ?? 0) + us);
  }
  const pct = (us: number) => Number(((100 * us) / totalUs).toFixed(1));
  const topFns = [...fnAgg.values()].sort((a, b) => b.us - a.us).slice(0, top).map((e) => ({ function: e.fn, where: e.where, selfMs: Math.round(e.us / 1000), pct: pct(e.us) }));
  const areas = [...areaAgg.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([a, us]) => ({ area: a, selfMs: Math.round(us / 1000), pct: pct(us) }));
  const text = [
    `CPU profile (${Math.round(totalUs / 1000)} ms sampled) - top ${top} self-time functions:`,
    ...topFns.map((t, i) => `  ${String(i + 1).padStart(2)}. ${String(t.pct).padStart(5)}%  ${String(t.selfMs).padStart(6)} ms  ${t.function}  ${t.where}`),
    'Self time by area:',
    ...areas.map((a) => `  ${String(a.pct).padStart(5)}%  ${String(a.selfMs).padStart(6)} ms  ${a.area}`),
  ].join('\n');
  return { totalMs: Math.round(totalUs / 1000), top: topFns, byArea: areas, text };
}
