// Telemetry's cost (issue 42; docs/observability.md): steps/s of the 100-concurrent row
// (10-step runs, SQLite durability full) with telemetry off, with the OpenTelemetry API and
// no SDK (the default), and with the SDK registered (batching span exporter, async-hooks
// context manager, a meter provider), each in its own child, rotating the order so all
// three share the machine's load (bench/otel-child.ts).
import { runChild } from './children.ts';
import type { Fig } from './report.ts';
import { summarize } from './stats.ts';

type Mode = 'off' | 'api' | 'sdk';
const MODES: Mode[] = ['off', 'api', 'sdk'];

export interface OtelBench {
  stepsPerS: Record<Mode, Fig>;
  /** api / off and sdk / off, medians of the per-round ratios (budget for api: >= 0.98). */
  ratio: { api: number; sdk: number };
  /** What the SDK side exported in its last child: proof it traced every step. */
  sdkSpans: number;
  sdkMetricPoints: number;
}

function fig(samples: number[]): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit: 'steps/s', samples: samples.map((x) => Number(x.toFixed(3))) };
}

export async function benchOtel(o: { quick: boolean; log: (s: string) => void }): Promise<OtelBench> {
  const rounds = o.quick ? 1 : 4;
  const child = { conc: 100, runs: o.quick ? 300 : 2000, reps: o.quick ? 1 : 3 };
  const samples: Record<Mode, number[]> = { off: [], api: [], sdk: [] };
  const ratios = { api: [] as number[], sdk: [] as number[] };
  let sdkSpans = 0;
  let sdkMetricPoints = 0;
  for (let r = 0; r < rounds; r++) {
    const order = MODES.map((_, i) => MODES[(i + r) % MODES.length]!);
    const med: Partial<Record<Mode, number>> = {};
    for (const mode of order) {
      const out = (await runChild('otel-child.ts', { ...child, mode }, 300_000)) as { stepsPerS: number[]; mode: Mode; spans: number; metricPoints: number };
      if (out.mode !== mode) throw new Error(`otel child ran mode ${out.mode}, not ${mode}`);
      if (mode === 'sdk') {
        // Every step attempt is a span, plus a run and a start span per run.
        if (out.spans < child.runs * 10) throw new Error(`the SDK side exported ${out.spans} spans for ${child.runs}+ runs of 10 steps: not tracing`);
        sdkSpans = out.spans;
        sdkMetricPoints = out.metricPoints;
      } else if (out.spans !== 0) throw new Error(`the ${mode} side exported spans`);
      samples[mode].push(...out.stepsPerS);
      med[mode] = summarize(out.stepsPerS).median;
    }
    ratios.api.push(med.api! / med.off!);
    ratios.sdk.push(med.sdk! / med.off!);
    o.log(`otel round ${r + 1}/${rounds}: off ${Math.round(med.off!)}, api ${Math.round(med.api!)}, sdk ${Math.round(med.sdk!)} steps/s`);
  }
  return {
    stepsPerS: { off: fig(samples.off), api: fig(samples.api), sdk: fig(samples.sdk) },
    ratio: { api: summarize(ratios.api).median, sdk: summarize(ratios.sdk).median },
    sdkSpans,
    sdkMetricPoints,
  };
}

export function otelTable(c: OtelBench): string {
  const f = (x: Fig) => `${x.median!.toFixed(0)} (${x.min!.toFixed(0)}-${x.max!.toFixed(0)})`;
  return [
    '| issue 42 row: telemetry (100 concurrent x 10 steps, SQLite full) | telemetry: false | API, no SDK (default) | SDK: batching span exporter, async-hooks context, meter provider |',
    '|---|---|---|---|',
    `| steps/s median (min-max), rotating children | ${f(c.stepsPerS.off)} | ${f(c.stepsPerS.api)} | ${f(c.stepsPerS.sdk)} |`,
    `| share of telemetry: false, median of per-round ratios (budget for no SDK: >= 0.98) | 1 | ${c.ratio.api.toFixed(3)} | ${c.ratio.sdk.toFixed(3)} |`,
    `| exported by the SDK side's last child | | | ${c.sdkSpans} spans, ${c.sdkMetricPoints} metric points |`,
  ].join('\n');
}
