// ISO 8601 text of an instant, from UTC fields only.
//
// Same text as `new Date(ms).toISOString()`, which on node 20 (V8 11.3) also looks up the host's
// local time zone through ICU on every call (ToDateString computes the local offset and zone
// name even for the ISO form). That first lookup maps ~0.8 MiB of node's ICU data and code
// into the process, and an engine formats timestamps on its first run (step and run views):
// idle RSS, issue 17. The UTC getters use V8's date cache without ICU.
const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

// The last instant formatted, kept: a run's steps (and a batch's runs) mostly start and end in
// the same millisecond, and a finished view formats two instants per step.
let lastMs = NaN;
let lastIso = '';
// The second that instant fell in, [secondStart, secondStart + 1000), and its text up to the
// milliseconds ('2026-12-02T00:35:07.'): an instant in the same second is that text plus three
// digits. Formatting every field again made ~0.4 KB of short-lived strings per instant, the
// largest single source of garbage on the step path after the step's own values.
let secondStart = NaN;
let secondText = '';
const MAX_MS = 8.64e15;

/** `new Date(ms).toISOString()`, identical output (extended years included); a RangeError for
 *  an invalid time, as toISOString throws. */
export function isoTime(ms: number): string {
  if (ms === lastMs) return lastIso;
  const into = ms - secondStart;
  // An integer instant of the cached second (Date truncates fractions: those take the long way).
  if (into >= 0 && into < 1000 && into === Math.floor(into) && ms <= MAX_MS) {
    lastIso = secondText + String(1000 + into).slice(1) + 'Z';
  } else {
    lastIso = format(ms);
    const t = Math.trunc(ms) || 0; // Date's own truncation; -0 is 0
    secondStart = t - (((t % 1000) + 1000) % 1000);
    secondText = lastIso.slice(0, -4);
  }
  lastMs = ms;
  return lastIso;
}

function format(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) throw new RangeError('Invalid time value');
  const y = d.getUTCFullYear();
  const year = y >= 0 && y <= 9999 ? String(y).padStart(4, '0') : `${y < 0 ? '-' : '+'}${String(Math.abs(y)).padStart(6, '0')}`;
  const msPart = d.getUTCMilliseconds();
  return `${year}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${msPart < 10 ? '00' : msPart < 100 ? '0' : ''}${msPart}Z`;
}
