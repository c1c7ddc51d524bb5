/**
 * The dashboard's one way to show a time: `YYYY-MM-DD HH:MM:SS UTC`, 24-hour, to the millisecond where that matters,
 * in a <time> whose datetime is the instant in ISO form. ui.js adds the other zone (the browser's, or UTC) as the
 * title when the time is pointed at or focused and, when the header's toggle says local, writes every such time in the
 * browser's zone instead.
 */

/** A time as the API gives it (ISO 8601, microseconds and offsets included) or epoch milliseconds. */
export type Moment = string | number;

/** What a <time> shows: the date and time, or the time of day alone; `-ms` adds the milliseconds. */
export type TimeFormat = 'datetime' | 'datetime-ms' | 'time' | 'time-ms';

/** The instant as ISO 8601 in UTC to the millisecond, or undefined when it is no time. */
export function isoOf(at: Moment): string | undefined {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** An ISO instant (as isoOf gives it) in a format, in UTC: the text the server writes. */
export function utcText(iso: string, format: TimeFormat): string {
  const milliseconds = format.endsWith('-ms');
  const clock = iso.slice(11, milliseconds ? 23 : 19);
  return format.startsWith('datetime') ? `${iso.slice(0, 10)} ${clock} UTC` : clock;
}

interface TimestampProps {
  at: Moment;
  precise?: boolean;
  /** The time of day alone (the datetime attribute and the title keep the date). */
  timeOfDay?: boolean;
}

/** One time; `precise` shows its milliseconds. A text that is no time is shown as it is. */
export function Timestamp({ at, precise = false, timeOfDay = false }: TimestampProps) {
  const iso = isoOf(at);
  if (iso === undefined) return <>{String(at)}</>;
  const format: TimeFormat = `${timeOfDay ? 'time' : 'datetime'}${precise ? '-ms' : ''}`;
  return (
    <time class="timestamp" datetime={iso} data-format={format}>
      {utcText(iso, format)}
    </time>
  );
}

/** Emulator and wall clock this far apart or more are shown both. */
const SAME_TIME_MS = 1000;

/**
 * A time on the emulator clock and the wall-clock time it happened at: one time while they agree, both when they
 * differ (a frozen or moved clock), the wall time as a time of day.
 */
export function EmulatorTime({ at, wall, precise = false }: { at: Moment; wall: Moment; precise?: boolean }) {
  const [emulator, real] = [isoOf(at), isoOf(wall)];
  if (emulator === undefined || real === undefined || Math.abs(Date.parse(emulator) - Date.parse(real)) < SAME_TIME_MS)
    return <Timestamp at={at} precise={precise} />;
  return (
    <span class="time-pair">
      emulator <Timestamp at={at} precise={precise} /> · wall <Timestamp at={wall} precise={precise} timeOfDay />
    </span>
  );
}
