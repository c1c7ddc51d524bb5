import { z } from 'zod';
import { formatTimestamp, MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import { queryInteger } from '../shared/validation.ts';
import type { RequestJournal } from './journal.ts';
import type { JournalEntry, RequestMinute, RequestStats, StatusClass } from './schemas.ts';

const MICROS_PER_MINUTE = 60 * MICROS_PER_SECOND;
export const DEFAULT_STATS_MINUTES = 15;
export const DEFAULT_STATS_ERRORS = 10;

/** The query of GET /_localplane/requests/stats. */
export const requestStatsQuery = z.strictObject({
  /** How many minutes, the one under way included (at most a day). */
  minutes: queryInteger({ min: 1, max: 24 * 60 }).optional(),
  /** How many of the latest errors. */
  errors: queryInteger({ min: 0, max: 100 }).optional(),
});

const emptyMinute = (start: Micros): RequestMinute => ({
  start: formatTimestamp(start),
  total: 0,
  by_status_class: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
  by_source: { api: 0, objstore: 0 },
});

/**
 * Requests per minute of the emulator clock over the last `minutes` up to `now` (by the time
 * they arrived), and the latest `errors` entries with a status of 400 or more, wherever they are
 * in the journal. One pass over the entries' summaries: only the errors shown are made.
 */
export function requestStats(
  journal: RequestJournal,
  now: Micros,
  { minutes = DEFAULT_STATS_MINUTES, errors = DEFAULT_STATS_ERRORS }: z.output<typeof requestStatsQuery>,
): RequestStats {
  const firstStart = (Math.floor(now / MICROS_PER_MINUTE) - minutes + 1) * MICROS_PER_MINUTE;
  const perMinute = Array.from({ length: minutes }, (_, index) => emptyMinute(firstStart + index * MICROS_PER_MINUTE));
  const latestErrors: JournalEntry[] = [];
  journal.scan(0, true, (kept) => {
    const { status, source } = kept;
    const minute =
      kept.micros <= now ? perMinute[Math.floor((kept.micros - firstStart) / MICROS_PER_MINUTE)] : undefined;
    if (minute !== undefined) {
      minute.total++;
      minute.by_status_class[`${Math.floor(status / 100)}xx` as StatusClass]++;
      minute.by_source[source]++;
    }
    if (status >= 400 && latestErrors.length < errors) latestErrors.push(kept.entry());
    return true;
  });
  return { now: formatTimestamp(now), minutes: perMinute, latest_errors: latestErrors };
}
