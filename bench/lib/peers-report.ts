// The peer rows' table and chart (bench/lib/peers.ts): each system's median (min–max) over
// repetitions, and ours against each peer as the median (min–max) of per-repetition ratios,
// oriented so that "Nx" always means ours is N times better (faster, less CPU, less memory).
import { barChart, type Bar } from './svg.ts';
import { summarize } from './stats.ts';
import type { PeerRun, Rep, Sys } from './peers.ts';

const LABEL: Record<Sys, string> = { ours: 'ours', dbos: 'DBOS', cf: 'Cloudflare' };

interface Metric {
  key: string;
  label: (run: PeerRun) => string;
  /** The figure of one system in one repetition (undefined: none), and a note for its cell. */
  get: (rep: Rep, s: Sys) => { v: number; steps?: number; note?: string; side?: number } | undefined;
  higherBetter: boolean;
  unit: string;
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const at = (rep: Rep, s: Sys, kind: 'shapes' | 'idle' | 'start', key?: string) => {
  const o = rep[s]?.[kind] as Record<string, unknown> | undefined;
  return (key ? o?.[key] : o) as Record<string, unknown> | undefined;
};
const fmt = (x: number) => (Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : Number(x.toPrecision(3)).toString());
const thousands = (n: number) => n.toLocaleString('en-US');

export const METRICS: Metric[] = [
  {
    key: 'inFlight', label: (r) => `${r.cfg.inFlight} runs in flight, journaled steps/s`, higherBetter: true, unit: 'steps/s',
    get: (rep, s) => {
      const o = at(rep, s, 'shapes', 'inFlight');
      const v = num(o?.stepsPerS);
      // The failure's own message is in the JSON (rows vary in wording; the cell says what ran).
      return v === undefined ? undefined : { v, note: o?.fellBackFrom ? `${String(o.inFlight)} in flight (${String(o.fellBackFrom)} failed)` : undefined };
    },
  },
  {
    key: 'oneAtATime', label: () => 'one run at a time, p50 ms per run', higherBetter: false, unit: 'ms',
    get: (rep, s) => { const v = num(at(rep, s, 'shapes', 'oneAtATime')?.p50Ms); return v === undefined ? undefined : { v }; },
  },
  {
    key: 'sequential', label: (r) => `one run of ${thousands(r.cfg.seqSteps)} sequential steps, ms`, higherBetter: false, unit: 'ms',
    get: (rep, s) => {
      const o = at(rep, s, 'shapes', 'sequential');
      const v = num(o?.ms);
      return v === undefined ? undefined : { v, steps: o!.steps as number };
    },
  },
  {
    key: 'fanOut', label: (r) => `fan-out of ${thousands(r.cfg.fanSteps)} steps in one run (Promise.all), ms`, higherBetter: false, unit: 'ms',
    get: (rep, s) => {
      const o = at(rep, s, 'shapes', 'fanOut');
      const v = num(o?.ms);
      return v === undefined ? undefined : { v, steps: o!.steps as number };
    },
  },
  {
    key: 'cpu', label: () => 'CPU per step, all processes (the Postgres server included), ms', higherBetter: false, unit: 'ms',
    get: (rep, s) => { const v = num(at(rep, s, 'shapes', 'inFlight')?.cpuMsPerStep); return v === undefined ? undefined : { v }; },
  },
  {
    key: 'idle', label: () => 'idle RSS over node alone after one run, MiB (the process tree; the Postgres server beside it, not in the ratio)', higherBetter: false, unit: 'MiB',
    get: (rep, s) => {
      const o = at(rep, s, 'idle');
      const v = num(o?.rssMiB);
      if (v === undefined || rep.nodeAloneMiB === undefined) return undefined;
      return { v: v - rep.nodeAloneMiB, side: num(o?.serverPssMiB) };
    },
  },
  {
    key: 'start', label: () => 'start-up with finished runs in the store: start to first finished run, ms', higherBetter: false, unit: 'ms',
    get: (rep, s) => { const v = num(at(rep, s, 'start')?.startToFirstRunMs); return v === undefined ? undefined : { v }; },
  },
];

export interface Row { metric: string; cells: Partial<Record<Sys, { median: number; min: number; max: number; notes: string[]; steps?: number; side?: number }>>; ratio: Partial<Record<Sys, { median: number; min: number; max: number; n: number }>> }

export function aggregate(run: PeerRun): Row[] {
  return METRICS.map((m) => {
    const row: Row = { metric: m.key, cells: {}, ratio: {} };
    for (const s of run.systems) {
      const xs = run.reps.map((r) => m.get(r, s)).filter((x) => x !== undefined);
      if (!xs.length) continue;
      const sum = summarize(xs.map((x) => x.v));
      const steps = [...new Set(xs.map((x) => x.steps).filter((x) => x !== undefined))];
      const sides = xs.map((x) => x.side).filter((x): x is number => x !== undefined);
      const notes = xs.map((x) => x.note).filter((x): x is string => !!x);
      row.cells[s] = {
        median: sum.median, min: sum.min, max: sum.max, steps: steps.length === 1 ? steps[0] : undefined,
        notes: [...new Set(notes)].map((n) => (xs.length > 1 ? `${n} in ${notes.filter((x) => x === n).length} of ${xs.length}` : n)),
        side: sides.length ? summarize(sides).median : undefined,
      };
      if (s === 'ours') continue;
      // Per repetition; per step when the step counts differ (a peer that capped a run's steps).
      const rs = run.reps.map((r) => {
        const a = m.get(r, 'ours');
        const b = m.get(r, s);
        if (!a || !b) return NaN;
        const av = a.v / (a.steps ?? 1);
        const bv = b.v / (b.steps ?? 1);
        return m.higherBetter ? av / bv : bv / av;
      }).filter(Number.isFinite);
      if (rs.length) {
        const q = summarize(rs);
        row.ratio[s] = { median: q.median, min: q.min, max: q.max, n: q.n };
      }
    }
    return row;
  });
}

const x = (r: { median: number; min: number; max: number; n: number }) => `**${fmt(r.median)}x**${r.n > 1 ? ` (${fmt(r.min)}–${fmt(r.max)})` : ''}`;

export function peersTable(run: PeerRun, rows: Row[]): string {
  const v = run.versions;
  const head: Record<Sys, string> = {
    ours: 'ours (SQLite, durability full, built)',
    dbos: `DBOS ${v.dbos} on ${v.postgres?.replace(/^postgres \(PostgreSQL\) /, 'Postgres ') ?? 'Postgres'}`,
    cf: `Cloudflare Workflows in miniflare ${v.miniflare} (workerd ${v.workerd})`,
  };
  const peers = run.systems.filter((s) => s !== 'ours');
  const out = [
    `| shape (median (min–max) over ${run.reps.length} repetitions) | ${run.systems.map((s) => head[s]).join(' | ')} | ${peers.map((s) => `ours vs ${LABEL[s]}`).join(' | ')} |`,
    `|---|${run.systems.map(() => '---').join('|')}|${peers.map(() => '---').join('|')}|`,
  ];
  for (const [i, row] of rows.entries()) {
    const m = METRICS[i]!;
    const cell = (s: Sys) => {
      if (run.na[s]) return 'n/a';
      const c = row.cells[s];
      if (!c) return '—';
      const range = run.reps.length > 1 ? ` (${fmt(c.min)}–${fmt(c.max)})` : '';
      const steps = c.steps !== undefined && (m.key === 'sequential' ? c.steps !== run.cfg.seqSteps : m.key === 'fanOut' ? c.steps !== run.cfg.fanSteps : false) ? ` (${thousands(c.steps)} steps)` : '';
      const fill = m.key === 'start' ? ` (${thousands(run.cfg.fill[s])} runs)` : '';
      const side = c.side !== undefined ? ` + the Postgres server, ${fmt(c.side)} MiB PSS` : '';
      return `${fmt(c.median)}${range}${steps}${fill}${side}${c.notes.length ? `; ${c.notes.join('; ')}` : ''}`;
    };
    const ratio = (s: Sys) => (row.ratio[s] ? x(row.ratio[s]!) : '—');
    out.push(`| ${m.label(run)} | ${run.systems.map(cell).join(' | ')} | ${peers.map(ratio).join(' | ')} |`);
  }
  for (const s of run.systems) if (run.na[s]) out.push(`\n${LABEL[s]}: n/a, ${run.na[s]}`);
  return out.join('\n');
}

export function peersChart(run: PeerRun, rows: Row[], subtitle: string): string {
  const bars: Bar[] = [];
  const short: Record<string, string> = { inFlight: 'in flight', oneAtATime: '1 at a time', sequential: 'sequential', fanOut: 'fan-out', cpu: 'CPU/step', idle: 'idle RSS', start: 'start-up' };
  for (const row of rows) {
    for (const s of run.systems) {
      const r = row.ratio[s];
      if (r) bars.push({ group: short[row.metric]!, series: `ours vs ${LABEL[s]}`, y: r.median, min: r.min, max: r.max, label: `${fmt(r.median)}x` });
    }
  }
  return barChart({ title: 'Ours against DBOS and Cloudflare Workflows (N x better, same 10-step workflow)', subtitle, yLabel: 'ratio (x)', bars });
}
