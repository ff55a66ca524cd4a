// Engine configuration: one zod-checked object. A bad field fails createEngine() with a
// one-line message naming it.
import { z } from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { LOG_LEVELS, type LogSink } from '../src/ports/logger.ts';

export const configSchema = z
  .object({
    backend: z.enum(['sqlite', 'restate']).optional(),
    dataDir: z.string().min(1).default('.tranquil'),
    workflows: z.array(z.unknown()).default([]),
    /** 'full' = every acknowledged commit is fsync'd (default); 'normal' = WAL without fsync per commit. */
    durability: z.enum(['full', 'normal']).default('full'),
    maxConcurrentRuns: z.number().int().min(1).max(100_000).default(1000),
    webhook: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(0),
        /** Largest accepted webhook body; larger ones get 413. Default 1 MiB. */
        bodyLimitBytes: z.number().int().min(1).max(1024 ** 3).default(1024 * 1024),
      })
      .strict()
      .optional(),
    /** Where the engine's (and the Restate SDK's) messages go: `level` (default 'warn';
     *  'silent' = nothing), `sink(level, message)` (default: stderr, `tranquil: ` prefix). */
    log: z
      .object({
        level: z.enum(LOG_LEVELS).default('warn'),
        sink: z.custom<LogSink>((v) => typeof v === 'function', 'expected a function (level, message) => void').optional(),
      })
      .strict()
      .optional(),
    restate: z
      .object({
        ingressUrl: z.string().url().optional(),
        adminUrl: z.string().url().optional(),
        /** Request identity keys of an external Restate; the endpoint then serves only it. */
        identityKeys: z.array(z.string().regex(/^publickeyv1_[1-9A-HJ-NP-Za-km-z]+$/, 'expected publickeyv1_<base58>')).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type EngineConfig = z.input<typeof configSchema>;
export type ResolvedConfig = z.output<typeof configSchema> & { backend: 'sqlite' | 'restate' };

export function resolveConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const data = parseOrThrow(configSchema, input ?? {}, 'engine config');
  const fromEnv = env.TRANQUIL_BACKEND;
  if (fromEnv !== undefined && fromEnv !== 'sqlite' && fromEnv !== 'restate') {
    throw new ValidationError(`TRANQUIL_BACKEND: expected 'sqlite' or 'restate', got '${fromEnv}'`);
  }
  return { ...data, backend: data.backend ?? fromEnv ?? 'sqlite' };
}
