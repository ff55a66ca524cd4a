// `npm run soak -- --backend=sqlite|restate --minutes=60 [--sample-seconds=10] [--out=file.json]`:
// the soak of test/soak/harness.ts, writing its samples, verdicts and workload checks as JSON
// (and an SVG of the memory and resource series beside it); exits 1 when a check failed.
// `--from=<soak.json>` judges the samples of an earlier run again with today's bounds.
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { lineChart } from '../../bench/lib/svg.ts';
import { runSoak, type SoakResult } from './harness.ts';
import { BOUNDS, type Sample } from './metrics.ts';
import { checkGrowth } from './slope.ts';

const Args = z.object({
  backend: z.enum(['sqlite', 'restate']).default('sqlite'),
  minutes: z.coerce.number().positive().default(60),
  'sample-seconds': z.coerce.number().positive().default(10),
  out: z.string().min(1).optional(),
  from: z.string().min(1).optional(),
  /** Also print the verdicts as a Markdown table (docs/reliability.md, Soak). */
  markdown: z.enum(['1']).optional(),
}).strict();

const raw = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = a.match(/^--([a-z-]+)=(.*)$/);
  if (!m) {
    console.error(`soak: expected --name=value, got '${a}'`);
    process.exit(2);
  }
  return [m[1], m[2]];
}));
const parsed = Args.safeParse(raw);
if (!parsed.success) {
  console.error(`soak: ${parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}
const args = parsed.data;
const out = args.out ?? `soak-${args.backend}-${args.minutes}min.json`;

const result = args.from ? rejudge(JSON.parse(readFileSync(args.from, 'utf8')) as SoakResult)
  : await runSoak({ backend: args.backend, minutes: args.minutes, sampleMs: args['sample-seconds'] * 1000, log: (l) => console.log(l) });
if (!args.from) {
  writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
  writeFileSync(out.replace(/\.json$/, '') + '.svg', chart(result));
}
for (const v of result.verdicts) {
  console.log(`${v.pass ? 'ok  ' : 'FAIL'} ${v.metric}: ${v.first.toFixed(2)} -> ${v.last.toFixed(2)} ${v.unit}; slope ${v.slopePerHour.toFixed(2)} ± ${v.sePerHour.toFixed(2)} ${v.unit}/h (bound ${v.bound})`);
}
const w = result.workload;
console.log(`workload ${result.ok.workload ? 'ok' : 'FAIL'}: ${w.finished} of ${w.started} started runs finished (${JSON.stringify(w.byKind)}), missing ${w.missing.length}, doubled ${w.doubled.length}, unexpected ${w.unexpected.length}, left ${w.left.length}, schedule ${w.scheduleRuns}/${w.scheduleExpected}, webhook posts ${w.webhookPosts} (+${w.webhookRedeliveries} redeliveries, ${w.webhookBad.length} bad), panel polls ${w.panelPolls} (${w.panelBad.length} bad), child errors ${w.childErrors.length}, exit ${w.exitCode}`);
if (!args.from) console.log(`wrote ${out}`);
if (args.markdown) console.log(markdown(result));
process.exit(result.ok.growth && result.ok.workload ? 0 : 1);

function markdown(r: SoakResult): string {
  const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
  const rows = r.verdicts.map((v) => `| ${v.metric} | ${f(v.first)} | ${f(v.last)} | ${f(v.slopePerHour)} ± ${f(v.sePerHour)} ${v.unit} | ${v.bound} | ${v.pass ? 'pass' : '**FAIL**'} |`);
  const last = r.samples.at(-1);
  const extra = last?.restateRssMiB === undefined ? [] : [`| restate-server RSS (reported) | ${f(r.samples[0]!.restateRssMiB!)} | ${f(last.restateRssMiB)} | | | |`, `| restate data dir MiB (reported) | ${f(r.samples[0]!.restateDirMiB!)} | ${f(last.restateDirMiB!)} | | | |`];
  return ['| metric | first sample | last sample | slope per hour (2nd half) | bound | verdict |', '|---|---|---|---|---|---|', ...rows, ...extra].join('\n');
}

function rejudge(r: SoakResult): SoakResult {
  const verdicts = BOUNDS.map((b) => checkGrowth(r.samples.map((s) => ({ t: s.t, v: s[b.metric as keyof Sample] as number })), b));
  return { ...r, verdicts, ok: { ...r.ok, growth: verdicts.every((v) => v.pass) } };
}

function chart(r: SoakResult): string {
  const min = (s: { t: number }) => s.t / 60;
  const series = [
    { name: 'engine RSS MiB', points: r.samples.map((s) => ({ x: min(s), y: s.rssMiB })) },
    { name: 'heap used MiB', points: r.samples.map((s) => ({ x: min(s), y: s.heapUsedMiB })) },
    { name: 'open fds', points: r.samples.map((s) => ({ x: min(s), y: s.fds })), dashed: true },
    { name: 'active handles', points: r.samples.map((s) => ({ x: min(s), y: s.handles })), dashed: true },
  ];
  return lineChart({ title: `Soak, ${r.backend}: ${r.minutes} min`, subtitle: 'samples every ' + r.sampleMs / 1000 + ' s; slope fitted over the second half', xLabel: 'minutes', yLabel: 'MiB / count', series });
}
