import { RingBuffer } from '../shared/ring-buffer.ts';
import type { Needle } from '../shared/needle.ts';
import { formatTimestamp } from '../shared/time.ts';
import type { JournalBody, JournalEntry, JournalEntrySummary, ObjstoreTarget } from './schemas.ts';
import { entryMatcher, type FilterableEntry, type JournalFilter, onlyPages } from './filter.ts';

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

/**
 * What is known of a request when it is recorded, and all that the cheap filters read (`target`: null for the API's).
 */
export type EntrySummary = Pick<JournalEntry, 'source' | 'method' | 'path' | 'status' | 'workspace_id'> & {
  target: ObjstoreTarget | null;
};
/** An entry's bodies, made apart from the rest: a body filter reads them alone. */
export type EntryBodies = { request: JournalBody; response: JournalBody };
/** The rest of an entry, but for its times and duration (the kept entry's own fields). */
export type EntryDetails = Pick<JournalEntry, 'query' | 'objstore'> & {
  requestHeaders: JournalEntry['request']['headers'];
  responseHeaders: JournalEntry['response']['headers'];
};
/**
 * Makes an entry's parts when the journal is read (building and masking them costs more than
 * answering a cached list), each apart: a body filter reads the bodies alone. One object of
 * plain fields per request: the journal keeps thousands, which every garbage collection of the
 * young generation copies as they age. `responseSource`, when given, is what the response's text
 * is decoded from as it is shown, unmasked (an API answer): a body filter searches it first.
 */
export interface EntryParts {
  requestBody(): JournalBody;
  responseBody(): JournalBody;
  readonly responseSource?: string | Buffer;
  /** When the request arrived, on the wall clock (epoch milliseconds). */
  readonly wallMs: number;
  readonly duration_ms: number;
  details(): EntryDetails;
}

/**
 * A journalled request: its summary, its bodies and its entry, each made once, when first read.
 * The filters read its headers and bodies as journalled (secrets masked): a header filter makes
 * the entry, a body filter the bodies alone, and only for a response that may hold its text.
 */
export class KeptEntry implements FilterableEntry {
  // The summary's fields are the entry's own: a filter over a full journal reads them without a hop.
  readonly source: JournalEntry['source'];
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly workspace_id: string | null;
  readonly target: ObjstoreTarget | null;
  /** When the request arrived, on the wall clock (epoch milliseconds): the stats count by it. */
  readonly wallMs: number;
  readonly duration_ms: number;
  private parts: EntryParts | null;
  private madeRequest: JournalBody | null = null;
  private madeResponse: JournalBody | null = null;
  private made: JournalEntry | null = null;

  constructor(
    readonly id: number,
    /** `entry.time` in emulator microseconds. */
    readonly micros: number,
    summary: EntrySummary,
    readonly fault_rule_id: string | null,
    parts: EntryParts,
  ) {
    this.source = summary.source;
    this.method = summary.method;
    this.path = summary.path;
    this.status = summary.status;
    this.workspace_id = summary.workspace_id;
    this.target = summary.target;
    this.wallMs = parts.wallMs;
    this.duration_ms = parts.duration_ms;
    this.parts = parts;
  }

  workspaceId(): string | null {
    return this.workspace_id;
  }

  header(name: string): string | undefined {
    return this.entry().request.headers[name.toLowerCase()];
  }

  responseHeader(name: string): string | undefined {
    return this.entry().response.headers[name.toLowerCase()];
  }

  /** What the journal's live list shows of the entry, made without making the entry. */
  summary(): JournalEntrySummary {
    const { id, source, method, path, status, workspace_id, fault_rule_id, duration_ms } = this;
    return {
      id,
      time: formatTimestamp(this.micros),
      wall_time: new Date(this.wallMs).toISOString(),
      source,
      method,
      path,
      status,
      workspace_id,
      fault_rule_id,
      duration_ms,
    };
  }

  /** Whether the text of a body holds the needle. */
  bodyHolds(part: keyof EntryBodies, needle: Needle): boolean {
    const responseSource = this.parts?.responseSource;
    if (
      part === 'response' &&
      this.madeResponse === null &&
      responseSource !== undefined &&
      !needle.mayBeIn(responseSource)
    )
      return false;
    return this.body(part).text?.includes(needle.text) ?? false;
  }

  /** A body alone, made once (a body filter over the whole journal makes no more). */
  private body(part: keyof EntryBodies): JournalBody {
    if (this.made !== null) return part === 'request' ? this.made.request.body : this.made.response.body;
    if (part === 'request') return (this.madeRequest ??= this.parts!.requestBody());
    return (this.madeResponse ??= this.parts!.responseBody());
  }

  entry(): JournalEntry {
    if (this.made === null) {
      const request = this.body('request');
      const response = this.body('response');
      const { query, requestHeaders, responseHeaders, objstore } = this.parts!.details();
      const { source, method, path, status, workspace_id, fault_rule_id, duration_ms } = this;
      this.made = Object.freeze({
        id: this.id,
        time: formatTimestamp(this.micros),
        wall_time: new Date(this.wallMs).toISOString(),
        source,
        method,
        path,
        query,
        status,
        workspace_id,
        request: { headers: requestHeaders, body: request },
        response: { headers: responseHeaders, body: response },
        objstore,
        duration_ms,
        fault_rule_id,
      });
      this.parts = null;
      this.madeRequest = null;
      this.madeResponse = null;
    }
    return this.made;
  }
}

/** The API's and the objstore's requests in one bounded journal; the oldest go first. */
export class RequestJournal {
  private readonly kept: RingBuffer<KeptEntry>;
  private nextId = 1;
  private resets = 0;
  private readonly listeners = new Set<() => void>();

  constructor(readonly capacity = DEFAULT_JOURNAL_CAPACITY) {
    this.kept = new RingBuffer(capacity);
  }

  /** Keeps a request; its details are made when the journal is read. */
  record(micros: number, summary: EntrySummary, faultRuleId: string | null, parts: EntryParts): void {
    this.kept.push(new KeptEntry(this.nextId++, micros, summary, faultRuleId, parts));
    if (this.listeners.size > 0) this.notify();
  }

  /** The id of the latest entry recorded since the last reset (0 before the first). */
  get latestId(): number {
    return this.nextId - 1;
  }

  /**
   * The id of the oldest entry kept (the next id while none is): the entries recorded before it since the last reset
   * were dropped, for room or by `clear`.
   */
  get firstKeptId(): number {
    return this.kept.length === 0 ? this.nextId : this.kept.at(0).id;
  }

  /** How many times the journal was reset: ids from 1 again. */
  get generation(): number {
    return this.resets;
  }

  /** Calls `listener` after each entry is recorded and after each reset; returns what stops it. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * Visits the kept entries after the id `afterId`: from the oldest on, or from the newest
   * back, while `visit` answers true.
   */
  scan(afterId: number, newestFirst: boolean, visit: (kept: KeptEntry) => boolean): void {
    const { length } = this.kept;
    const from = this.indexAfter(afterId);
    if (newestFirst) {
      for (let index = length - 1; index >= from; index--) if (!visit(this.kept.at(index))) return;
    } else {
      for (let index = from; index < length; index++) if (!visit(this.kept.at(index))) return;
    }
  }

  private indexAfter(id: number): number {
    if (this.kept.length === 0) return 0;
    // The kept ids are consecutive: each entry's is one more than the one before it.
    return Math.min(Math.max(id + 1 - this.kept.at(0).id, 0), this.kept.length);
  }

  /**
   * The matching entries, oldest first (`order: 'desc'`: newest first). `limit` keeps the
   * first ones after `since` when it is given (paging forward), else the most recent ones
   * (before `before`, when given: paging back). `total` counts every match, `limit` aside.
   */
  private matching(filter: JournalFilter, counting = false): { found: KeptEntry[]; total: number } {
    const matches = entryMatcher(filter);
    const { since, before, limit = Infinity, order = 'asc' } = filter;
    const newestFirst = order === 'desc' || (limit !== Infinity && since === undefined);
    const afterId = since !== undefined && 'id' in since ? since.id : 0;
    // A filter that only pages matches every kept entry in its id range, so that range's size is its total.
    const countedByIds = counting && onlyPages(filter);
    const found: KeptEntry[] = [];
    let total = 0;
    this.scan(afterId, newestFirst, (kept) => {
      if (!matches(kept)) return true;
      total++;
      if (found.length < limit) found.push(kept);
      return (counting && !countedByIds) || found.length < limit;
    });
    if (countedByIds)
      total = Math.max(
        0,
        (before === undefined ? this.kept.length : this.indexAfter(before - 1)) - this.indexAfter(afterId),
      );
    return { found: newestFirst === (order === 'desc') ? found : found.reverse(), total };
  }

  list(filter: JournalFilter = {}): JournalEntry[] {
    return this.matching(filter).found.map((kept) => kept.entry());
  }

  /** The matching entries as `list` gives them, and how many match in all, `limit` aside. */
  page(filter: JournalFilter = {}): { entries: JournalEntry[]; total: number } {
    const { found, total } = this.matching(filter, true);
    return { entries: found.map((kept) => kept.entry()), total };
  }

  count(filter: JournalFilter = {}): number {
    return this.matching(filter).found.length;
  }

  /** The entries after the id `afterId` that no fault rule acted on, oldest first, at most `limit`. */
  unfaulted(afterId: number, limit: number): KeptEntry[] {
    const found: KeptEntry[] = [];
    this.scan(afterId, false, (kept) => {
      if (kept.fault_rule_id === null) found.push(kept);
      return found.length < limit;
    });
    return found;
  }

  /** The entry with that id, while the journal keeps it. */
  get(id: number): JournalEntry | undefined {
    const index = this.indexAfter(id - 1);
    return index < this.kept.length && this.kept.at(index).id === id ? this.kept.at(index).entry() : undefined;
  }

  /** Drops every entry; ids go on from where they were (a poller's `since` stays valid). */
  clear(): void {
    this.kept.clear();
  }

  /** Drops every entry and numbers from 1 again. */
  reset(): void {
    this.kept.clear();
    this.nextId = 1;
    this.resets++;
    this.notify();
  }
}
