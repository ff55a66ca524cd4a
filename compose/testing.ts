// @tranquil/engine/testing: an engine on a temporary SQLite file driven by a manual clock,
// so a 48h sleep completes in microseconds of test time.
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

export interface TestEngineOptions extends Omit<EngineConfig, 'backend'> {
  /** ISO time or epoch ms the manual clock starts at; default 2026-01-01T00:00:00Z. */
  startAt?: string | number;
  /** Deterministic random source for ctx.random() and retry jitter. */
  random?: () => number;
  /** Named fault points a test arms to crash or pause the engine (reliability tests). */
  faults?: FaultPoints;
}

export interface TestEngine {
  engine: Engine;
  dataDir: string;
  /** The manual clock itself, for clock jumps (`clock.set(t, true)` moves it backwards). */
  clock: ManualClock;
  now(): number;
  /** Moves the clock forward, firing everything that comes due in order; resolves when idle. */
  advance(duration: Duration): Promise<void>;
  /** Resolves when no run can make progress without time passing or a signal. */
  idle(): Promise<void>;
  /** Stops the engine; removes the data dir it created. */
  close(): Promise<void>;
}

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
