// The value codec's cost (issue 37; docs/values.md, Cost): steps/s of the 100-concurrent
// row (10-step runs, ~200 B plain results, SQLite durability full) with the new codec and
// with today's JSON encoding, each in its own child, alternating so both share the
// machine's load; and the encode+decode time of one value, in this process.
import { toJsonText } from '../../src/domain/json.ts';
import { decodeValue, encodeValue } from '../../src/domain/value-codec.ts';
import { runChild } from './children.ts';
import type { Fig } from './report.ts';
import { nowMs, summarize } from './stats.ts';
import { STEP_RESULT } from './workflows.ts';

function fig(samples: number[], unit: string): Fig {
  const s = summarize(samples);
  return { median: s.median, min: s.min, max: s.max, n: s.n, unit, samples: samples.map((x) => Number(x.toFixed(3))) };
}

export interface CodecBench {
  newStepsPerS: Fig;
  legacyStepsPerS: Fig;
  /** new / legacy, median of the per-pair ratios. */
  ratio: number;
  /** µs per value, encode + decode: [today's JSON, new codec]; rich: new codec only. */
  perValueUs: { plain: [number, number]; items20: [number, number]; rich: number };
}

function usPer(f: () => unknown, n: number): number {
  for (let i = 0; i < n / 10; i++) f();
  const t = nowMs();
  for (let i = 0; i < n; i++) f();
  return ((nowMs() - t) * 1000) / n;
}

export async function benchCodec(o: { quick: boolean; log: (s: string) => void }): Promise<CodecBench> {
  const pairs = o.quick ? 2 : 4;
  const child = { conc: 100, runs: o.quick ? 600 : 2000, reps: o.quick ? 2 : 3 };
  const fresh: number[] = [];
  const legacy: number[] = [];
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    // Alternate which goes first: neither always gets the cooler machine.
    const order = p % 2 === 0 ? [false, true] : [true, false];
    const got: Record<string, number> = {};
    for (const isLegacy of order) {
      const out = (await runChild('codec-child.ts', { ...child, legacy: isLegacy }, 300_000)) as { stepsPerS: number[]; legacy: boolean };
      if (out.legacy !== isLegacy) throw new Error(`codec child ran the ${out.legacy ? 'legacy' : 'new'} encoding, not the one asked for`);
      const med = summarize(out.stepsPerS).median;
      (isLegacy ? legacy : fresh).push(...out.stepsPerS);
      got[String(isLegacy)] = med;
    }
    ratios.push(got.false! / got.true!);
    o.log(`codec pair ${p + 1}/${pairs}: new ${Math.round(got.false!)} vs today's ${Math.round(got.true!)} steps/s`);
  }
  const n = o.quick ? 20_000 : 100_000;
  const items20 = { items: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item-${i}`, qty: i * 2 })) };
  const rich = { at: new Date(0), tags: new Set(['a', 'b']), lines: new Map([['sku-1', 2]]), total: 10n, note: undefined };
  const old = (v: unknown) => JSON.parse(toJsonText(v, 'v'));
  const neu = (v: unknown) => decodeValue(encodeValue(v, 'v').stored);
  return {
    newStepsPerS: fig(fresh, 'steps/s'),
    legacyStepsPerS: fig(legacy, 'steps/s'),
    ratio: summarize(ratios).median,
    perValueUs: {
      plain: [usPer(() => old(STEP_RESULT), n), usPer(() => neu(STEP_RESULT), n)],
      items20: [usPer(() => old(items20), n), usPer(() => neu(items20), n)],
      rich: usPer(() => neu(rich), n),
    },
  };
}

export function codecTable(c: CodecBench): string {
  const f = (x: Fig) => `${x.median!.toFixed(0)} (${x.min!.toFixed(0)}-${x.max!.toFixed(0)})`;
  return [
    '| issue 37 row: the value codec (100 concurrent x 10 steps, ~200 B plain results, SQLite full) | new codec | today\'s JSON encoding |',
    '|---|---|---|',
    `| steps/s median (min-max), alternating children | ${f(c.newStepsPerS)} | ${f(c.legacyStepsPerS)} |`,
    `| new / today's, median of per-pair ratios (budget: >= 0.95) | ${c.ratio.toFixed(3)} | |`,
    `| encode + decode of the bench's 200 B result | ${c.perValueUs.plain[1].toFixed(2)} us | ${c.perValueUs.plain[0].toFixed(2)} us |`,
    `| encode + decode of an object of 20 items | ${c.perValueUs.items20[1].toFixed(2)} us | ${c.perValueUs.items20[0].toFixed(2)} us |`,
    `| encode + decode of { Date, Set, Map, BigInt, undefined } (devalue) | ${c.perValueUs.rich.toFixed(2)} us | not storable (BigInt) or lost |`,
  ].join('\n');
}
