// Result shapes and the printed table (markdown, so the same text goes into the README).
export type Fig =
  | { median: number; min: number; max: number; n: number; unit: string; samples: number[]; na?: undefined; [k: string]: unknown }
  | { na: string; median?: undefined; min?: undefined; max?: undefined; unit?: undefined };

export const BACKENDS = [
  { key: 'sqlite-full', label: 'SQLite, durability full', backend: 'sqlite', durability: 'full' },
  { key: 'sqlite-normal', label: 'SQLite, durability normal', backend: 'sqlite', durability: 'normal' },
  { key: 'restate', label: 'Restate backend', backend: 'restate', durability: 'full' },
] as const;
export type BackendKey = (typeof BACKENDS)[number]['key'];

export interface Results {
  mode: 'quick' | 'full';
  startedAt: string;
  durationS?: number;
  machine: Record<string, unknown>;
  config: unknown;
  raw: Record<string, { txPerS: Fig; pairsPerS: Fig }>;
  floor?: { nodeIdleRssMiB?: Fig; nodeTsxIdleRssMiB: Fig };
  backends: Partial<Record<BackendKey, Record<string, unknown>>>;
  profile?: Record<string, unknown>;
}

/** Path lookup into a backend's results; undefined when absent. */
export function get(res: Results, key: BackendKey, path: string): Fig | undefined {
  const b = res.backends[key];
  if (!b) return undefined;
  if (typeof b.na === 'string') return { na: b.na };
  let cur: unknown = b;
  for (const p of path.split('.')) {
    if (cur && typeof cur === 'object' && 'na' in (cur as object) && typeof (cur as { na: unknown }).na === 'string') return cur as Fig;
    cur = (cur as Record<string, unknown> | undefined)?.[p];
  }
  return cur as Fig | undefined;
}

const groupNum = (x: number): string => {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  const d = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });
};

export function cell(f: Fig | undefined): string {
  if (!f) return '-';
  if (f.na !== undefined) return `n/a (${f.na})`;
  return `${groupNum(f.median)} (${groupNum(f.min)}–${groupNum(f.max)})`;
}

const m = (f: Fig | undefined): number | undefined => (f && f.na === undefined && Number.isFinite(f.median) ? f.median : undefined);
const pct = (a?: number, b?: number) => (a !== undefined && b ? `${((100 * a) / b).toFixed(0)}%` : 'n/a');
const times = (a?: number, b?: number) => (a !== undefined && b ? `${(a / b).toFixed(2)}x` : 'n/a');

const ratio = (x: number | undefined, y: number | undefined) => (x !== undefined && y ? x / y : undefined);

function target(v: number | undefined, goal: number, higherIsBetter: boolean, label: string): string {
  if (v === undefined) return `${label}: n/a`;
  const ok = higherIsBetter ? v >= goal : v <= goal;
  return `${label}: ${ok ? 'met' : `missed (${higherIsBetter ? `${((100 * v) / goal).toFixed(0)}% of target` : `${(v / goal).toFixed(2)}x over`})`}`;
}

export function renderTable(res: Results): string {
  const F = 'sqlite-full' as const;
  const N = 'sqlite-normal' as const;
  const R = 'restate' as const;
  const rawF1 = res.raw['FULL_batch1'];
  const rawN1 = res.raw['NORMAL_batch1'];
  const rawF100 = res.raw['FULL_batch100'];
  const rawN100 = res.raw['NORMAL_batch100'];
  const restateNa = res.backends[R]?.na as string | undefined;
  let firstNa = true;
  const rCell = (path: string) => {
    if (!restateNa) return cell(get(res, R, path));
    if (!firstNa) return 'n/a';
    firstNa = false;
    return `n/a (${restateNa})`;
  };
  const timersN = (k: BackendKey) => (res.backends[k]?.timers as { n?: number } | undefined)?.n;
  const rows: string[][] = [];
  const row = (name: string, full: string, normal: string, restate: string, ratio: string, tgt: string) => rows.push([name, full, normal, restate, ratio, tgt]);

  row('raw better-sqlite3: 1 pair per tx (pairs/s)', cell(rawF1?.pairsPerS), cell(rawN1?.pairsPerS), '-', '-', 'the limit (1 fsync per tx at FULL)');
  row('raw better-sqlite3: 100 pairs per tx (pairs/s)', cell(rawF100?.pairsPerS), cell(rawN100?.pairsPerS), '-', '-', 'the limit (batched)');

  const a = (k: BackendKey) => get(res, k, 'concurrency.c100.stepsPerS');
  row(
    '(a) 100 concurrent runs x 10 step.do: journaled steps/s',
    cell(a(F)), cell(a(N)), rCell('concurrency.c100.stepsPerS'),
    `full: ${pct(m(a(F)), m(rawF100?.pairsPerS))} of raw batched FULL; normal: ${pct(m(a(N)), m(rawN100?.pairsPerS))} of raw batched NORMAL; full vs Restate: ${times(m(a(F)), m(get(res, R, 'concurrency.c100.stepsPerS')))}`,
    `${target(m(a(F)), 25_000, true, '>= 25,000')}; ${target(m(a(F)) !== undefined && m(rawF100?.pairsPerS) ? m(a(F))! / m(rawF100?.pairsPerS)! : undefined, 0.3, true, '>= 30% raw')}; ${target(ratio(m(a(F)), m(get(res, R, 'concurrency.c100.stepsPerS'))), 8, true, '>= 8x Restate')}`,
  );
  const lat = (k: BackendKey) => get(res, k, 'concurrency.c1.runLatencyMedianMs');
  row(
    '(b) one run at a time, 10 steps: latency per run (ms, median)',
    cell(lat(F)), cell(lat(N)), rCell('concurrency.c1.runLatencyMedianMs'),
    `Restate / full: ${times(m(get(res, R, 'concurrency.c1.runLatencyMedianMs')), m(lat(F)))}`,
    target(ratio(m(get(res, R, 'concurrency.c1.runLatencyMedianMs')), m(lat(F))), 6, true, '>= 6x faster than Restate'),
  );
  const seq = (k: BackendKey) => get(res, k, 'concurrency.c1.stepsPerS');
  row(
    '(b) one run at a time: sequential steps/s',
    cell(seq(F)), cell(seq(N)), rCell('concurrency.c1.stepsPerS'),
    `full: ${pct(m(seq(F)), m(rawF1?.pairsPerS))} of raw 1-pair FULL; normal: ${pct(m(seq(N)), m(rawN1?.pairsPerS))} of raw 1-pair NORMAL`,
    target(m(seq(F)) !== undefined && m(rawF1?.pairsPerS) ? m(seq(F))! / m(rawF1?.pairsPerS)! : undefined, 0.5, true, '>= 50% raw'),
  );
  const st = (k: BackendKey) => get(res, k, 'startToFirstRunMs');
  row('(c) engine start to first finished run, fresh dir, in-process (ms)', cell(st(F)), cell(st(N)), rCell('startToFirstRunMs'),
    `Restate / full: ${times(m(get(res, R, 'startToFirstRunMs')), m(st(F)))}`, target(m(st(F)), 150, false, '<= 150 ms'));
  const cold = (k: BackendKey) => get(res, k, 'idle.coldProcessToFirstRunMs');
  row('(c) new process (node + tsx) to first finished run (ms)', cell(cold(F)), cell(cold(N)), rCell('idle.coldProcessToFirstRunMs'), 'includes Node boot and TS loading', '-');
  const idle = (k: BackendKey) => get(res, k, 'idle.idleRssMiB');
  row('(d) idle engine RSS, built engine (npm run build) on plain node, after one run (MiB)', cell(idle(F)), cell(idle(N)), rCell('idle.idleRssMiB'),
    `node alone: ${cell(res.floor?.nodeIdleRssMiB)}`, target(m(idle(F)), 80, false, '<= 80 MiB'));
  const idleTsx = (k: BackendKey) => get(res, k, 'idle.idleRssTsxMiB');
  row('(d) idle engine RSS, same under the tsx dev loader (MiB)', cell(idleTsx(F)), cell(idleTsx(N)), rCell('idle.idleRssTsxMiB'),
    `node + tsx alone: ${cell(res.floor?.nodeTsxIdleRssMiB)}`, '-');
  const nF = timersN(F);
  const nN = timersN(N);
  const tl = `(full N=${nF ?? '?'}, normal N=${nN ?? '?'})`;
  const ti = (k: BackendKey, p: string) => get(res, k, `timers.sameInstant.${p}`);
  row(`(e) N runs sleeping until one instant ${tl}: all complete, ms after the instant`, cell(ti(F, 'completeAfterInstantMs')), cell(ti(N, 'completeAfterInstantMs')),
    rCell('timers.sameInstant.completeAfterInstantMs'), '', `${target(m(ti(F, 'completeAfterInstantMs')), 10_000, false, '<= 10 s')} (target at N=100,000)`);
  row('(e) wake lateness p50 (ms)', cell(ti(F, 'latenessP50Ms')), cell(ti(N, 'latenessP50Ms')), rCell('timers.sameInstant.latenessP50Ms'), '', '-');
  row('(e) wake lateness p99 (ms)', cell(ti(F, 'latenessP99Ms')), cell(ti(N, 'latenessP99Ms')), rCell('timers.sameInstant.latenessP99Ms'), '', '-');
  row('(e) RSS with N runs sleeping (MiB)', cell(ti(F, 'rssSleepingMiB')), cell(ti(N, 'rssSleepingMiB')), rCell('timers.sameInstant.rssSleepingMiB'), '',
    `${target(m(ti(F, 'rssSleepingMiB')), 250, false, '<= 250 MiB')} (target at N=100,000)`);
  row('(e) peak RSS during the wake-up (MiB)', cell(ti(F, 'peakRssMiB')), cell(ti(N, 'peakRssMiB')), rCell('timers.sameInstant.peakRssMiB'), '', '-');
  const dbb = (k: BackendKey) => (res.backends[k]?.timers as { dbBytesPerRun?: number } | undefined)?.dbBytesPerRun;
  row('(e) DB bytes per sleeping run (vacuumed copy)', dbb(F) ? groupNum(dbb(F)!) : '-', dbb(N) ? groupNum(dbb(N)!) : '-', restateNa ? 'n/a' : '-', '', '-');
  const ret = (k: BackendKey, f: string) => (res.backends[k]?.timers as Record<string, number> | undefined)?.[f];
  const rb = (x: number | undefined) => (x === undefined ? '-' : groupNum(x));
  row('(e) JS heap still reachable after GC, per sleeping run / per finished run (bytes)', `${rb(ret(F, 'retainedHeapBytesPerSleepingRun'))} / ${rb(ret(F, 'retainedHeapBytesPerFinishedRun'))}`,
    `${rb(ret(N, 'retainedHeapBytesPerSleepingRun'))} / ${rb(ret(N, 'retainedHeapBytesPerFinishedRun'))}`, restateNa ? 'n/a' : '-', 'one child per mode, --expose-gc', 'finished runs should retain ~0');
  const sp = (k: BackendKey, p: string) => get(res, k, `timers.spread.${p}`);
  const spreadRuns = (res.backends[F]?.timers as { spread?: { runs?: number; duePerS?: number } } | undefined)?.spread;
  row(`(e) timers due at ${spreadRuns?.duePerS ?? 1000}/s (${spreadRuns?.runs ?? '?'} runs): wake lateness p99 (ms)`, cell(sp(F, 'latenessP99Ms')), cell(sp(N, 'latenessP99Ms')),
    rCell('timers.spread.latenessP99Ms'), `p50 full ${cell(sp(F, 'latenessP50Ms'))}`, target(m(sp(F, 'latenessP99Ms')), 50, false, '<= 50 ms'));
  const od = (k: BackendKey) => get(res, k, 'timers.overdueRestart.catchupMs');
  row(`(f) restart with N overdue timers ${tl}: catch-up (ms)`, cell(od(F)), cell(od(N)), rCell('timers.overdueRestart.catchupMs'), '',
    `${target(m(od(F)), 10_000, false, '<= 10 s')} (target at N=100,000)`);
  for (const c of [1, 10, 100, 1000]) {
    const g = (k: BackendKey) => get(res, k, `concurrency.c${c}.stepsPerS`);
    row(`(g) steps/s at concurrency ${c}`, cell(g(F)), cell(g(N)), rCell(`concurrency.c${c}.stepsPerS`),
      `full vs Restate: ${times(m(g(F)), m(get(res, R, `concurrency.c${c}.stepsPerS`)))}`, '-');
  }
  // Inside one run: the k-th signal's cost (issue 19) and a 1,000-way fan-out (issue 18).
  const sg = (k: BackendKey, p: string) => get(res, k, `signals.${p}`);
  const sgCell = (k: BackendKey) => {
    const f = sg(k, 'firstMedianMs');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} / ${groupNum(m(sg(k, 'lastMedianMs'))!)} (x${m(sg(k, 'lastOverFirst'))?.toFixed(2)})`;
  };
  const sigN = (res.backends[F]?.signals as { n?: number } | undefined)?.n ?? (res.backends[R]?.signals as { n?: number } | undefined)?.n ?? 300;
  row(`(i) ${sigN} signals to one run, one after another: median ms per signal, first 50 / last 50 (last/first)`, sgCell(F), sgCell(N), restateNa ? rCell('signals.firstMedianMs') : sgCell(R),
    'flat = last/first near 1', 'last/first <= 1.5');
  const fo = (k: BackendKey, p: string) => get(res, k, `fanout.${p}`);
  const foCell = (k: BackendKey) => {
    const f = fo(k, 'ms');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} ms; RSS +${groupNum(m(fo(k, 'rssDeltaMiB'))!)} MiB, heap +${groupNum(m(fo(k, 'heapDeltaMiB'))!)} MiB`;
  };
  const foN = (res.backends[F]?.fanout as { n?: number } | undefined)?.n ?? 1000;
  row(`(j) one run: await Promise.all(${foN} x step.do(no-op)): ms to result; RSS and heap growth`, foCell(F), foCell(N), restateNa ? rCell('fanout.ms') : foCell(R),
    fo(R, 'treeRssDeltaMiB')?.na === undefined && m(fo(R, 'treeRssDeltaMiB')) !== undefined ? `Restate incl. restate-server: RSS +${groupNum(m(fo(R, 'treeRssDeltaMiB'))!)} MiB` : '-', '-');
  // Child runs (issue 40): an awaited child against a step in the same run; a fan-out of children.
  const ch = (k: BackendKey, p: string) => get(res, k, `children.${p}`);
  const chN = (k: BackendKey, p: 'cost' | 'fanout') => ((res.backends[k]?.children as Record<string, { n?: number }> | undefined)?.[p])?.n;
  const chCost = (k: BackendKey) => {
    const f = ch(k, 'cost.msPerChild');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} vs ${groupNum(m(ch(k, 'cost.msPerStep'))!)} ms (x${m(ch(k, 'cost.childOverStep'))?.toFixed(1)}; n=${chN(k, 'cost')})`;
  };
  row('(m) one run awaiting n children one after another (each one no-op step) vs n steps: ms per awaited child vs per step', chCost(F), chCost(N), restateNa ? rCell('children.cost.msPerChild') : chCost(R),
    'child/step, same engine', '-');
  const chFan = (k: BackendKey) => {
    const f = ch(k, 'fanout.ms');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} ms (n=${chN(k, 'fanout')}); peak RSS +${groupNum(m(ch(k, 'fanout.rssDeltaMiB'))!)} MiB`;
  };
  row('(m) one run: await Promise.all(n x step.invoke(one-step child)) (n = 1,000; less in --quick): ms to result; peak RSS growth', chFan(F), chFan(N), restateNa ? rCell('children.fanout.ms') : chFan(R),
    ch(R, 'fanout.treeRssDeltaMiB')?.na === undefined && m(ch(R, 'fanout.treeRssDeltaMiB')) !== undefined ? `Restate incl. restate-server: RSS +${groupNum(m(ch(R, 'fanout.treeRssDeltaMiB'))!)} MiB` : '-', '-');
  // Workflow files in Deno children (issue 11): the runner's per-run overhead, same run.
  const rn = (k: BackendKey, p: string) => get(res, k, `runner.${p}`);
  const rnCell = (k: BackendKey) => {
    const f = rn(k, 'perRunMs');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} ms vs bare ${groupNum(m(rn(k, 'bareMs'))!)} ms (x${m(rn(k, 'ratio'))?.toFixed(2)})`;
  };
  const rnCold = (k: BackendKey) => {
    const f = rn(k, 'coldRunMs');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} ms (x${m(rn(k, 'coldRatio'))?.toFixed(2)}); the child's load alone ${groupNum(m(rn(k, 'loadMs'))!)} ms`;
  };
  row('(k) workflow file, one step: trigger to result (warm child) vs bare `deno run --no-config` of an empty file', rnCell(F), rnCell(N), rCell('runner.perRunMs'),
    'ratio per interleaved pair, median', `${target(m(rn(F, 'ratio')), 1.5, false, '<= 1.5x')}`);
  row('(k) same, cold: every execution spawns and loads its child (deno.warmIdle 0)', rnCold(F), rnCold(N), rCell('runner.coldRunMs'), '-', '-');
  const rnBox = (k: BackendKey) => {
    const f = rn(k, 'loadSandboxedMs');
    if (!f || f.na !== undefined) return cell(f);
    return `${groupNum(f.median)} ms vs ${groupNum(m(rn(k, 'loadMs'))!)} ms unconfined (x${(f.median! / m(rn(k, 'loadMs'))!).toFixed(2)})`;
  };
  row('(k) a run child\'s load (spawn to exit, no token) under the OS sandbox (bubblewrap + memory cap) vs without', rnBox(F), rnBox(N), rCell('runner.loadSandboxedMs'), '-', '-');
  row('(l) workflow file, 10 steps, one run at a time: steps/s', cell(rn(F, 'tenStepsPerS')), cell(rn(N, 'tenStepsPerS')), rCell('runner.tenStepsPerS'), '-', '-');
  const head = ['workload', 'SQLite full', 'SQLite normal', 'Restate', 'ratios (same run)', 'target (full)'];
  const md = [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '/')).join(' | ')} |`),
  ];
  const mc = res.machine as Record<string, unknown>;
  const note = [
    `Mode ${res.mode}, ${res.startedAt}, ${res.durationS ?? '?'} s. Machine: ${mc.nproc} cores, ${mc.cpuModel}, ${mc.memGiB} GiB, Node ${mc.node}, SQLite ${mc.sqlite}.`,
    'Cells: median (min–max) of the repetitions after a warm-up. Raw rows: the FULL figure sits under "full", NORMAL under "normal".',
    'A pair = 1 journal-row INSERT (~200 B) + 1 cursor UPDATE; a journaled step = one step.do result committed to the file.',
  ];
  return [...note, '', ...md].join('\n');
}
