// Run log lines from a hostile workflow file (docs/runner.md, the runLog frame): a real Deno
// child speaking the step protocol itself. Each bad line is refused with one warning (not one
// per line), the flood is bounded by the per-execution budget, no record carries an id the
// file supplied, and the run is not failed for it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createEngine, type LogRecord } from '@tranquil/engine';
import { RUN_LOG_BUDGET } from '../../src/domain/run-log-line.ts';

it('forged, oversized, reserved-key and stray runLog frames are refused with one warning; a flood is bounded; the run goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tranquil-run-log-'));
  const records: LogRecord[] = [];
  const warnings: string[] = [];
  const engine = await createEngine({
    backend: 'sqlite', dataDir: join(dir, 'data'), workflowFiles: [join(import.meta.dirname, 'fixtures', 'log-forger.ts')],
    log: { level: 'warn', sink: (_l, m) => warnings.push(m), runs: { level: 'debug', sink: (r) => records.push(r) } },
  });
  await engine.start();
  try {
    await engine.workflows.approve('log-forger');
    const { runId } = await engine.trigger('log-forger', null);
    const view = await engine.result(runId, { timeout: '90s' });
    expect(view.status).toBe('succeeded');
    expect(view.output).toBe('still here');
    const mine = warnings.filter((w) => w.includes(`run ${runId}`));
    // The first refusal, named; the rest counted in one summary at the end of the execution.
    expect(mine[0]).toMatch(new RegExp(`^workflow 'log-forger' run ${runId} \\(child pid \\d+\\): a run log line was refused: (\\(frame\\)|runId): .*further refusals in this execution are counted, not written\\)$`));
    expect(mine.some((w) => /its run log lines are over the rate limit/.test(w))).toBe(true);
    expect(mine.at(-1)).toMatch(/\d+ run log line\(s\) dropped over the rate limit .* and 5 refused in this execution$/);
    expect(mine.length).toBe(3);
    // Nothing the file claimed: every record is this run's, with no trace ids (no SDK here).
    expect(records.every((r) => r.runId === runId && r.workflow === 'log-forger' && r.traceId === undefined)).toBe(true);
    const texts = records.map((r) => r.message);
    for (const bad of ['forged ids', 'reserved', 'not my attempt', 'bad level']) expect(texts).not.toContain(bad);
    expect(texts.some((t) => t.length > 10_000)).toBe(false);
    // The flood: at most the burst (and what the rate refilled meanwhile) got through.
    const flood = texts.filter((t) => t.startsWith('flood '));
    expect(flood.length).toBeGreaterThan(0);
    expect(flood.length).toBeLessThan(3000);
    expect(flood.length).toBeLessThanOrEqual(RUN_LOG_BUDGET.burstLines + 200);
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
