// Cron arithmetic on cron-parser (v5): the SlotCalendar the pure schedule planner needs.
// Time zones and DST are cron-parser's job; an expression with no future slot yields undefined.
// cron-parser itself loads on first use (sdk/cron-parser-loader.ts).
import type { SlotCalendar } from '../../domain/schedule.ts';
import { cronParser } from '../../../sdk/cron-parser-loader.ts';

export function cronCalendar(expression: string, timezone = 'UTC'): SlotCalendar {
  const { CronExpressionParser } = cronParser();
  const at = (t: number) => CronExpressionParser.parse(expression, { currentDate: new Date(t), tz: timezone });
  const safe = (f: () => number): number | undefined => {
    try {
      return f();
    } catch {
      // cron-parser throws when no slot exists in its search window (e.g. '0 0 31 2 *').
      return undefined;
    }
  };
  // Walking forward slot by slot (the planner does) reuses one iterator instead of re-parsing.
  let iter: ReturnType<typeof at> | undefined;
  let iterAt: number | undefined;
  return {
    nextAfter: (t) =>
      safe(() => {
        if (iter === undefined || iterAt !== t) iter = at(t);
        iterAt = iter.next().getTime();
        return iterAt;
      }),
    // prev() is strictly before currentDate, so ask from t + 1ms to include t itself.
    latestAtOrBefore: (t) => safe(() => at(t + 1).prev().getTime()),
  };
}
