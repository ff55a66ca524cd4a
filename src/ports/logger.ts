// The engine's logger: where everything the engine (and the Restate SDK it embeds) has to
// say goes, at a level the user sets (`createEngine({ log: { level, sink } })`). One line
// per message, no stack traces unless the level is `debug`.
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;
/** The engine config's `log.level`: messages below it are dropped; `silent` drops all. */
export type LogLevel = (typeof LOG_LEVELS)[number];
/** The levels a message can have (`silent` only switches everything off). */
export type MessageLevel = Exclude<LogLevel, 'silent'>;

/** Receives each message at or above the configured level. */
export type LogSink = (level: MessageLevel, message: string) => void;

export interface Logger {
  readonly level: LogLevel;
  /** Whether a message at `level` would be written (to skip formatting it otherwise). */
  enabled(level: MessageLevel): boolean;
  log(level: MessageLevel, message: string): void;
}
