import { RingBuffer } from '../shared/ring-buffer.ts';
import type { JournalEntry } from './schemas.ts';
import { entryMatcher, type JournalFilter } from './filter.ts';

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

/** Makes an entry (less its id) when the journal is read: building and masking it costs more than answering a cached list. */
export type EntryMaker = () => Omit<JournalEntry, 'id'>;

interface Kept {
  id: number;
  /** `entry.time` in emulator microseconds, for `since` filters. */
  micros: number;
  make: EntryMaker | null;
  entry: JournalEntry | null;
}

/** The kept entry, made once. */
function entryOf(kept: Kept): JournalEntry {
  if (kept.entry === null) {
    kept.entry = Object.freeze({ id: kept.id, ...kept.make!() });
    kept.make = null;
  }
  return kept.entry;
}

/** The API's and the objstore's requests in one bounded journal; the oldest go first. */
export class RequestJournal {
  private readonly kept: RingBuffer<Kept>;
  private nextId = 1;

  constructor(capacity = DEFAULT_JOURNAL_CAPACITY) {
    this.kept = new RingBuffer(capacity);
  }

  /** Keeps a request; its entry is made when the journal is read. */
  record(micros: number, make: EntryMaker): void {
    this.kept.push({ id: this.nextId++, micros, make, entry: null });
  }

  /**
   * Matching entries, oldest first. `limit` keeps the first ones after `since` when it is
   * given (paging forward), else the most recent ones.
   */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const matches = entryMatcher(filter);
    const found = this.kept
      .snapshot()
      .map((kept) => ({ entry: entryOf(kept), micros: kept.micros }))
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
