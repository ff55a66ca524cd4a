// @tranquil/engine/testing: an engine on a temporary SQLite file driven by a manual clock,
// so a 48h sleep completes in microseconds of test time.
/**
 * Testing: createTestEngine (an engine on a manual clock and a temporary SQLite file) and
 * replayFixture (replays a recorded run against changed code).
 * @module @tranquil/engine/testing
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDuration, type Duration } from '../src/domain/duration.ts';
import { ValidationError } from '../src/domain/errors.ts';
import { ManualClock } from '../src/adapters/clock/manual-clock.ts';
import type { FaultPoints } from '../src/adapters/sqlite/fault-points.ts';
import type { Engine } from '../src/runtime/engine.ts';
import { buildContainer, TOKENS } from './container.ts';
import { resolveConfig, type EngineConfig } from './config.ts';

export { replayFixture, type RunFixture } from './fixtures.ts';
export type { CheckVerdict } from '../src/runtime/replay-check.ts';
export type { ManualClock } from '../src/adapters/clock/manual-clock.ts';

/** createTestEngine's options: the engine config (no `backend`: always SQLite) plus the
 *  test's clock, random source and fault points. */
export interface TestEngineOptions extends Omit<EngineConfig, 'backend'> {
  /** ISO time or epoch ms the manual clock starts at; default 2026-01-01T00:00:00Z. */
  startAt?: string | number;
  /** Deterministic random source for ctx.random() and retry jitter. */
  random?: () => number;
  /** @internal Named fault points a test arms to crash or pause the engine (reliability tests). */
  faults?: FaultPoints;
}

/** A started engine on a manual clock, with the controls a test needs. */
export interface TestEngine {
  /** The engine, already started: trigger runs, signal them, read their views. */
  engine: Engine;
  /** Its data dir: `options.dataDir`, or a temporary one close() removes. */
  dataDir: string;
  /** The manual clock itself, for clock jumps (`clock.set(t, true)` moves it backwards). */
  clock: ManualClock;
  /** The manual clock's time, epoch ms. */
  now(): number;
  /** Moves the clock forward, firing everything that comes due in order; resolves when idle. */
  advance(duration: Duration): Promise<void>;
  /** Resolves when no run can make progress without time passing or a signal. */
  idle(): Promise<void>;
  /** Stops the engine; removes the data dir it created. */
  close(): Promise<void>;
}

/**
 * Starts an engine for tests: the SQLite backend on a temporary data dir, driven by a manual
 * clock, so `await t.advance('48h')` fires a 48-hour sleep at once. Resolves once the engine
 * is started and idle. Call `close()` when done.
 *
 * @throws ValidationError when `startAt` is not a time, or the config is invalid.
 * @example
 * ```ts
 * import { createTestEngine } from '@tranquil/engine/testing';
 *
 * const t = await createTestEngine({ workflows }); // your workflow() definitions
 * const { runId } = await t.engine.trigger('activation-nudge', { userId: 'u1' });
 * await t.advance('48h'); // the run's 48-hour sleep ends now
 * console.log((await t.engine.runs.get(runId)).status);
 * await t.close();
 * ```
 */
export async function createTestEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  const { startAt, random, faults, ...rest } = options;
  const start = startAt === undefined ? Date.parse('2026-01-01T00:00:00Z') : typeof startAt === 'number' ? startAt : Date.parse(startAt);
  if (!Number.isFinite(start)) throw new ValidationError(`startAt: '${String(startAt)}' is not a time`);
  const ownDir = rest.dataDir === undefined;
  const dataDir = rest.dataDir ?? mkdtempSync(join(tmpdir(), 'tranquil-test-'));
  const clock = new ManualClock(start);
  const config = resolveConfig({ ...rest, dataDir, backend: 'sqlite' });
  const engine = buildContainer(config, { clock, random, faults }).get<Engine>(TOKENS.engine);
  await engine.start();
  const idle = () => engine.executor.idle();
  await idle();
  return {
    engine,
    dataDir,
    clock,
    now: () => clock.now(),
    idle,
    async advance(duration) {
      const target = clock.now() + parseDuration(duration, 'advance');
      await idle();
      for (let next = clock.nextTimerAt(); next !== undefined && next <= target; next = clock.nextTimerAt()) {
        clock.set(Math.max(next, clock.now()));
        await idle();
      }
      clock.set(Math.max(target, clock.now()));
      await idle();
    },
    async close() {
      await engine.stop();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
