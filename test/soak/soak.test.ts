// The soak's slice in `npm test` (the hour is `npm run soak -- --minutes=60`, docs/reliability.md
// "Soak"): the mixed workload on a real engine in a child process, SQLite for 2 minutes and
// Restate for 1, side by side (so the slice adds ~2.5 min of wall time, not 3.5). On both,
// every started run must finish exactly once with nothing left live or failed. On SQLite no
// metric may grow past its hourly bound after warm-up (test/soak/metrics.ts; the fit needs its
// slope over the bound by two standard errors, so a short slice fails on gross leaks, not on
// noise). Restate's growth is judged by the hour run only: its engine warms up for minutes
// (RSS +28 MiB and handles still climbing over the first 2 min, measured), longer than a slice.
import { describe, expect, it } from 'vitest';
import { runSoak, type SoakResult } from './harness.ts';

const verdictLines = (r: SoakResult) =>
  r.verdicts.map((v) => `${v.pass ? 'ok' : 'FAIL'} ${v.metric} ${v.first.toFixed(2)} -> ${v.last.toFixed(2)}, ${v.slopePerHour.toFixed(1)} ± ${v.sePerHour.toFixed(1)} ${v.unit}/h (bound ${v.bound})`).join('\n');

describe.concurrent('soak slice', () => {
  for (const [backend, minutes] of [['sqlite', 2], ['restate', 1]] as const) {
    it(`${backend}: ${minutes} min of steps, sleeps, signals, events, schedules, webhooks, retention and panel polls; every run once, nothing stuck, no growth`, async () => {
      const r = await runSoak({ backend, minutes, sampleMs: 5000, drainMs: 90_000 });
      const w = r.workload;
      expect(w.childErrors).toEqual([]);
      expect(w.missing).toEqual([]);
      expect(w.doubled).toEqual([]);
      expect(w.unexpected).toEqual([]);
      expect(w.left).toEqual([]);
      expect(w.webhookBad).toEqual([]);
      expect(w.panelBad).toEqual([]);
      expect(w.exitCode).toBe(0);
      // Each kind of run took part, redeliveries were answered, slots fired on time.
      for (const kind of ['steps', 'signal', 'event', 'schedule', 'webhook']) expect(w.byKind[kind] ?? 0, kind).toBeGreaterThan(0);
      expect(w.webhookRedeliveries).toBeGreaterThan(0);
      expect(w.scheduleRuns).toBeGreaterThanOrEqual(w.scheduleExpected - 2);
      expect(r.samples.length).toBeGreaterThanOrEqual(minutes * 12 - 2);
      expect(r.ok.workload).toBe(true);
      if (backend === 'sqlite') expect(r.verdicts.filter((v) => !v.pass), verdictLines(r)).toEqual([]);
      else console.log(`soak slice, restate (reported, judged by the hour run):\n${verdictLines(r)}`);
    }, (minutes + 3) * 60_000);
  }
});
