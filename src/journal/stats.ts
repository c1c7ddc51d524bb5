import { z } from 'zod';
import { formatTimestamp, microsFromMillis } from '../shared/time.ts';
import { queryInteger } from '../shared/validation.ts';
import type { RequestJournal } from './journal.ts';
import type { JournalEntry, RequestMinute, RequestStats, StatusClass } from './schemas.ts';

const MS_PER_MINUTE = 60_000;
export const DEFAULT_STATS_MINUTES = 15;
export const DEFAULT_STATS_ERRORS = 10;

/** The query of GET /_localplane/requests/stats. */
export const requestStatsQuery = z.strictObject({
  /** How many minutes, the one under way included (at most a day). */
  minutes: queryInteger({ min: 1, max: 24 * 60 }).optional(),
  /** How many of the latest errors. */
  errors: queryInteger({ min: 0, max: 100 }).optional(),
});

const emptyMinute = (startMs: number): RequestMinute => ({
  start: formatTimestamp(microsFromMillis(startMs)),
  total: 0,
  by_status_class: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
  by_source: { api: 0, objstore: 0 },
});

/**
 * Requests per minute of the wall clock over the last `minutes` up to `nowMs` (by when they
 * arrived, epoch milliseconds), and the latest `errors` entries with a status of 400 or more,
 * wherever they are in the journal. The wall clock, not the emulator's: a test that moves the
 * emulator clock hours on still sees its requests in the last minutes. One pass over the
 * entries' summaries: only the errors shown are made.
 */
export function requestStats(
  journal: RequestJournal,
  nowMs: number,
  { minutes = DEFAULT_STATS_MINUTES, errors = DEFAULT_STATS_ERRORS }: z.output<typeof requestStatsQuery>,
): RequestStats {
  const firstStart = (Math.floor(nowMs / MS_PER_MINUTE) - minutes + 1) * MS_PER_MINUTE;
  const perMinute = Array.from({ length: minutes }, (_, index) => emptyMinute(firstStart + index * MS_PER_MINUTE));
  const latestErrors: JournalEntry[] = [];
  journal.scan(0, true, (kept) => {
    const { status, source, wallMs } = kept;
    const minute = wallMs <= nowMs ? perMinute[Math.floor((wallMs - firstStart) / MS_PER_MINUTE)] : undefined;
    if (minute !== undefined) {
      minute.total++;
      minute.by_status_class[`${Math.floor(status / 100)}xx` as StatusClass]++;
      minute.by_source[source]++;
    }
    if (status >= 400 && latestErrors.length < errors) latestErrors.push(kept.entry());
    return true;
  });
  return { now: formatTimestamp(microsFromMillis(nowMs)), minutes: perMinute, latest_errors: latestErrors };
}
