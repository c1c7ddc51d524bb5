import { RingBuffer } from '../shared/ring-buffer.ts';
import type { JournalEntry } from './schemas.ts';
import { entryMatcher, type JournalFilter } from './filter.ts';

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

interface Kept {
  entry: JournalEntry;
  /** `entry.time` in emulator microseconds, for `since` filters. */
  micros: number;
}

/** The API's and the objstore's requests in one bounded journal; the oldest go first. */
export class RequestJournal {
  private readonly kept: RingBuffer<Kept>;
  private nextId = 1;

  constructor(capacity = DEFAULT_JOURNAL_CAPACITY) {
    this.kept = new RingBuffer(capacity);
  }

  record(entry: Omit<JournalEntry, 'id'>, micros: number): JournalEntry {
    const journalled = Object.freeze({ id: this.nextId++, ...entry });
    this.kept.push({ entry: journalled, micros });
    return journalled;
  }

  /**
   * Matching entries, oldest first. `limit` keeps the first ones after `since` when it is
   * given (paging forward), else the most recent ones.
   */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const matches = entryMatcher(filter);
    const found = this.kept
      .snapshot()
      .filter(({ entry, micros }) => matches(entry, micros))
      .map(({ entry }) => entry);
    if (filter.limit === undefined || found.length <= filter.limit) return found;
    return filter.since === undefined ? found.slice(-filter.limit) : found.slice(0, filter.limit);
  }

  count(filter: JournalFilter = {}): number {
    return this.list(filter).length;
  }

  /** Drops every entry; ids go on from where they were (a poller's `since` stays valid). */
  clear(): void {
    this.kept.clear();
  }

  /** Drops every entry and numbers from 1 again. */
  reset(): void {
    this.kept.clear();
    this.nextId = 1;
  }
}
