// cron-parser (with luxon) loads on first use, not with the engine or the sdk: a program whose
// workflows have no schedule trigger never pays for it. The first schedule() call loads it (to
// validate the expression at definition time) and the cron calendar adapter reuses it.
// Synchronous (createRequire), because schedule() and the SlotCalendar the planner calls are
// synchronous. The production build (scripts/build.mjs) replaces this body with a bundled
// require('cron-parser'): same module, one copy in dist.
import { createRequire } from 'node:module';

type CronParser = typeof import('cron-parser');
let mod: CronParser | undefined;

export function cronParser(): CronParser {
  return (mod ??= createRequire(import.meta.url)('cron-parser') as CronParser);
}
