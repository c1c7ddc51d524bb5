/** Spans of emulator time as a person types and reads them: "90s", "2h", "1d 3h", "1h30m". */

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
};

/** A number and its unit; spaces and commas may separate the parts. */
const PART = /\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*,?/iy;

export const SPAN_HINT =
  'a number and a unit (s, m, h, d), parts added up: 90s, 15m, 2h, 1d 3h; a bare number is seconds';

/** A typed span in seconds, or an error that says what could not be read. */
export function parseSpan(text: string): { seconds: number } | { error: string } {
  const span = text.trim();
  if (span === '') return { error: `Type a span: ${SPAN_HINT}.` };
  if (/^\d+(\.\d+)?$/.test(span)) return { seconds: Number(span) };
  let seconds = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < span.length) {
    const at = PART.lastIndex;
    const part = PART.exec(span);
    if (!part) return { error: `Cannot read "${span.slice(at).trim()}" in "${span}": write ${SPAN_HINT}.` };
    const [, amount, unit] = part;
    if (unit === '') return { error: `"${amount}" in "${span}" has no unit: write ${SPAN_HINT}.` };
    const perUnit = UNIT_SECONDS[unit!.toLowerCase()];
    if (perUnit === undefined) return { error: `Unknown unit "${unit}" in "${span}": use s, m, h or d.` };
    seconds += Number(amount) * perUnit;
  }
  return { seconds };
}

/** Milliseconds as days, hours, minutes and seconds ("1d 3h", "1m 30s", "0.25s", "0s"). */
export function formatSpan(milliseconds: number): string {
  let rest = Math.round(Math.abs(milliseconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (rest >= size) parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest / 1000}s`);
  return parts.join(' ');
}

/** When a time falls due, said from now: "in 1m 30s", "now", "3s ago". */
export function fromNow(at: string, now: string): string {
  const milliseconds = Date.parse(at) - Date.parse(now);
  if (milliseconds === 0) return 'now';
  return milliseconds > 0 ? `in ${formatSpan(milliseconds)}` : `${formatSpan(milliseconds)} ago`;
}
