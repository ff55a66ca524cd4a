// The level filter in front of a LogSink. The default sink writes `tranquil: <message>` to
// stderr; the default level is `warn`, so a normal start, stop or a busy engine print nothing.
import type { Logger, LogLevel, LogSink, MessageLevel } from '../ports/logger.ts';

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

export const stderrSink: LogSink = (_level, message) => console.error(`tranquil: ${message}`);

export function levelLogger(level: LogLevel = 'warn', sink: LogSink = stderrSink): Logger {
  return {
    level,
    enabled: (l: MessageLevel) => RANK[l] <= RANK[level],
    log(l: MessageLevel, message: string) {
      if (RANK[l] > RANK[level]) return;
      try {
        sink(l, message);
      } catch {
        // A failing user sink must not break the engine path that logged.
      }
    },
  };
}
