// Run log lines (docs/observability.md, "Logs"): how a record is written as text and JSON,
// the level filter in front of a sink, a logger's refusal of bad fields, and the config keys
// (log.format, log.runs, restate.tracingEndpoint) with their one-line errors.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../compose/config.ts';
import type { LogRecord } from '../../src/ports/run-log.ts';
import { recordLine, runLogOutput } from '../../src/runtime/log-format.ts';
import { RunLogger } from '../../src/runtime/run-log.ts';

const record: LogRecord = {
  time: Date.UTC(2026, 11, 3, 12, 0, 0), level: 'info', message: 'charged', runId: 'r1', workflow: 'signup', step: 'pay', attempt: 2,
  traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', fields: { amount: 5, level: 'spoofed', who: { id: 7 } },
};

describe('recordLine', () => {
  it('json: one object with the engine keys, the fields beside them (never over them)', () => {
    const o = JSON.parse(recordLine(record, 'json')) as Record<string, unknown>;
    expect(o).toEqual({
      time: '2026-12-03T12:00:00.000Z', level: 'info', msg: 'charged', run_id: 'r1', workflow: 'signup', step: 'pay', attempt: 2,
      trace_id: record.traceId, span_id: record.spanId, amount: 5, who: { id: 7 },
    });
  });

  it('json: a field that is no JSON (a cycle, a BigInt) still gives one line', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const line = recordLine({ ...record, fields: { n: 10n, cyclic } }, 'json');
    expect(line.includes('\n')).toBe(false);
    expect(JSON.parse(line)).toMatchObject({ msg: 'charged', n: '10', cyclic: '[not JSON]' });
    expect(recordLine({ ...record, fields: { cyclic } }, 'text')).toContain('charged cyclic=[not JSON]');
    expect(JSON.parse(recordLine({ ...record, fields: { n: 10n } }, 'json')).n).toBe('10');
  });

  it('text: readable, with where it comes from, the fields and the ids', () => {
    expect(recordLine(record, 'text')).toBe(
      '2026-12-03T12:00:00.000Z INFO [signup r1 pay attempt 2] charged amount=5 level=spoofed who={"id":7} trace_id=0af7651916cd43dd8448eb211c80319c span_id=b7ad6b7169203331',
    );
    expect(recordLine({ time: record.time, level: 'warn', message: 'm', runId: 'r', workflow: 'w' }, 'text')).toBe('2026-12-03T12:00:00.000Z WARN [w r] m');
  });
});

describe('run loggers', () => {
  it('write at or above the level only; a throwing sink does not reach the code', () => {
    const got: LogRecord[] = [];
    const out = runLogOutput('warn', (r) => got.push(r))!;
    const log = new RunLogger(out, 'r1', 'wf', {});
    log.info('dropped');
    log.warn('kept', { a: 1 });
    log.error('kept too');
    expect(got.map((r) => [r.level, r.message, r.fields])).toEqual([['warn', 'kept', { a: 1 }], ['error', 'kept too', undefined]]);
    expect(runLogOutput('silent', () => {})).toBeUndefined();
    const throwing = new RunLogger(runLogOutput('info', () => { throw new Error('sink down'); })!, 'r1', 'wf', {});
    expect(() => throwing.info('fine')).not.toThrow();
  });

  it('a replayed line is not written; a step line carries its step and attempt', () => {
    const got: LogRecord[] = [];
    const out = runLogOutput('debug', (r) => got.push(r))!;
    new RunLogger(out, 'r1', 'wf', { replaying: () => true }).info('again');
    new RunLogger(out, 'r1', 'wf', { ids: () => ({ traceId: 't', spanId: 's' }) }, 'fetch', 3).debug('body');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ message: 'body', step: 'fetch', attempt: 3, traceId: 't', spanId: 's' });
  });

  it('fields that are not an object are refused in one line naming the call', () => {
    const log = new RunLogger(runLogOutput('info', () => {})!, 'r1', 'wf', {});
    expect(() => log.info('x', [1] as unknown as Record<string, unknown>)).toThrow("ctx.log.info: fields must be an object of named values, got an array");
    expect(() => new RunLogger(runLogOutput('info', () => {})!, 'r1', 'wf', {}, 's', 1).warn('x', 3 as unknown as Record<string, unknown>)).toThrow('info.log.warn: fields must be an object of named values, got number');
  });
});

describe('config', () => {
  it('log.format and log.runs: defaults and errors naming the key', () => {
    const c = resolveConfig({ log: { runs: {} } }, {});
    expect(c.log).toMatchObject({ level: 'warn', format: 'text', runs: { level: 'info' } });
    expect(() => resolveConfig({ log: { format: 'xml' as 'json' } }, {})).toThrow(/log\.format/);
    expect(() => resolveConfig({ log: { runs: { sink: 'stderr' as unknown as () => void } } }, {})).toThrow(/log\.runs\.sink.*expected a function/);
    expect(() => resolveConfig({ log: { runs: { level: 'loud' as 'info' } } }, {})).toThrow(/log\.runs\.level/);
  });

  it('restate.tracingEndpoint: an OTLP URL, only for the embedded server', () => {
    expect(resolveConfig({ restate: { tracingEndpoint: 'otlp+http://127.0.0.1:4318/v1/traces' } }, {}).restate?.tracingEndpoint).toBe('otlp+http://127.0.0.1:4318/v1/traces');
    expect(() => resolveConfig({ restate: { tracingEndpoint: 'http://collector:4317' } }, {})).not.toThrow();
    expect(() => resolveConfig({ restate: { tracingEndpoint: 'collector:4317' } }, {})).toThrow(/restate\.tracingEndpoint.*expected an OTLP endpoint/);
    expect(() => resolveConfig({ restate: { ingressUrl: 'http://10.0.0.5:8080', tracingEndpoint: 'http://collector:4317' } }, {})).toThrow(/restate\.tracingEndpoint.*embedded restate-server only/);
  });
});
