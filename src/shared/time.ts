/**
 * Times are kept as integer microseconds since the Unix epoch (UTC) in the database
 * and in memory, and rendered the way the real service renders them:
 * ISO 8601 with microseconds and an explicit +00:00 offset.
 */
export type Micros = number;

export const MICROS_PER_SECOND = 1_000_000;
export const MICROS_PER_HOUR = 3600 * MICROS_PER_SECOND;
export const MICROS_PER_DAY = 24 * MICROS_PER_HOUR;
/**
 * The longest span a request may give in seconds (a limit, a delay): 100 years, so that the times computed from it stay
 * valid.
 */
export const MAX_SPAN_SECONDS = 100 * 365 * 24 * 3600;

export function microsFromMillis(millis: number): Micros {
  return Math.round(millis * 1000);
}

export function formatTimestamp(micros: Micros): string {
  const millis = Math.floor(micros / 1000);
  const fraction = String(micros - millis * 1000).padStart(3, '0');
  // toISOString() is `YYYY-MM-DDTHH:MM:SS.mmmZ`: keep the milliseconds, add the microseconds and the offset.
  return `${new Date(millis).toISOString().slice(0, 23)}${fraction}+00:00`;
}

export function formatNullableTimestamp(micros: Micros | null): string | null {
  return micros === null ? null : formatTimestamp(micros);
}

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses an ISO 8601 date-time to microseconds. A value without an offset is read as
 * UTC, as the real service does. Returns null when the text is not a valid date-time, or
 * one that microseconds in a JavaScript number cannot hold exactly (before 1684-07-28 or
 * after 2255-06-05), rather than keep it altered.
 */
export function parseTimestamp(text: string): Micros | null {
  const match = ISO_PATTERN.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', offset] = match;
  const check = new Date(Date.UTC(2000, 0, 1, +hour, +minute, +second));
  // Set the year apart: Date.UTC reads years 0–99 as 1900–1999.
  check.setUTCFullYear(+year!, +month! - 1, +day!);
  const millis = check.getTime();
  if (
    check.getUTCMonth() !== +month! - 1 ||
    check.getUTCDate() !== +day! ||
    +hour > 23 ||
    +minute > 59 ||
    +second > 59
  ) {
    return null;
  }
  let offsetMinutes = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const digits = offset.replace(':', '');
    offsetMinutes = (digits[0] === '-' ? -1 : 1) * (+digits.slice(1, 3) * 60 + +digits.slice(3, 5));
  }
  const micros = (millis - offsetMinutes * 60_000) * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
  return Number.isSafeInteger(micros) ? micros : null;
}

/** Start of the UTC day that contains the instant. */
export function startOfUtcDay(micros: Micros): Micros {
  return Math.floor(micros / MICROS_PER_DAY) * MICROS_PER_DAY;
}

/** Splits [start, end) at UTC midnights: one export run per day partition. */
export function dayPartitions(start: Micros, end: Micros): [Micros, Micros][] {
  const partitions: [Micros, Micros][] = [];
  for (let day = startOfUtcDay(start); day < end; day += MICROS_PER_DAY) {
    partitions.push([Math.max(start, day), Math.min(end, day + MICROS_PER_DAY)]);
  }
  return partitions;
}
