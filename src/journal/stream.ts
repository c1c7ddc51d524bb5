import type { EventEmitter } from 'node:events';
import { commentText, eventText } from '../shared/event-stream.ts';
import { entryMatcher, type JournalFilter } from './filter.ts';
import type { KeptEntry, RequestJournal } from './journal.ts';

/** Journal streams open at once per instance (a browser opens at most 6 connections to a host). */
export const MAX_JOURNAL_STREAMS = 16;
/** A comment line this often keeps proxies and clients from closing an idle stream. */
export const JOURNAL_STREAM_HEARTBEAT_MS = 15_000;
/**
 * New entries go out at once after a quiet spell, then at most this often: a burst of requests is a chunk per interval,
 * not a write per request.
 */
export const JOURNAL_STREAM_INTERVAL_MS = 100;
/** Entries in one chunk at most: a long replay goes out as the client reads it. */
export const ENTRIES_PER_CHUNK = 200;

/**
 * How a stream sends what it read: an event per entry as GET /requests gives it, or one event per chunk of the entries'
 * summaries (a JSON list, oldest first; the event's id the last one's), which makes no entry.
 */
export type JournalStreamShape = 'entries' | 'summaries';

const CHUNK_TEXT: Readonly<Record<JournalStreamShape, (chunk: KeptEntry[]) => string>> = {
  entries: (chunk) =>
    chunk.map((kept) => eventText({ id: kept.id, event: 'request', data: JSON.stringify(kept.entry()) })).join(''),
  summaries: (chunk) =>
    eventText({
      id: chunk.at(-1)!.id,
      event: 'requests',
      data: JSON.stringify(chunk.map((kept) => kept.summary())),
    }),
};

const encoder = new TextEncoder();

/** After a reset, ids start from 1 again: `id: 0` makes a reconnecting client ask for everything after it. */
const RESET_EVENT = eventText({ id: 0, event: 'reset', data: '{}' });
const OPENING = commentText('localplane request journal');
const HEARTBEAT = commentText('heartbeat');

/**
 * One client's stream. It keeps no queue of its own: it reads the journal from the last id
 * it looked at, as fast as the client reads what it sent (a slow client falls behind and,
 * past the journal's capacity, misses what the journal dropped).
 */
class JournalStream {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private generation: number;
  /**
   * Whether the journal may hold entries not sent yet that the client's reading should fetch: the last fill stopped
   * for the client, not at the journal's end. New entries are the wake-ups' to send.
   */
  private behind = true;
  private readonly chunkText: (chunk: KeptEntry[]) => string;
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    private readonly journal: RequestJournal,
    private readonly matches: (kept: KeptEntry) => boolean,
    /** The id of the last entry looked at. */
    private cursor: number,
    shape: JournalStreamShape,
    /** Only the newest this many of what was recorded since the last read (a live list showing that many). */
    private readonly newest: number | undefined,
    onCancel: () => void,
  ) {
    this.generation = journal.generation;
    this.chunkText = CHUNK_TEXT[shape];
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        controller.enqueue(encoder.encode(OPENING));
      },
      pull: () => {
        if (this.behind) this.fill();
      },
      cancel: onCancel,
    });
  }

  /** Sends what the journal recorded since the last look, while the client is reading. */
  fill(): void {
    if (this.generation !== this.journal.generation) {
      this.generation = this.journal.generation;
      this.cursor = 0;
      this.controller.enqueue(encoder.encode(RESET_EVENT));
    }
    this.behind = false;
    for (;;) {
      if ((this.controller.desiredSize ?? 0) <= 0) {
        this.behind = true;
        return;
      }
      const chunk = this.newest === undefined ? this.readChunk() : this.readNewest(this.newest);
      if (chunk.length === 0) return;
      this.controller.enqueue(encoder.encode(this.chunkText(chunk)));
    }
  }

  /** The next ENTRIES_PER_CHUNK matching entries after the cursor, at most. */
  private readChunk(): KeptEntry[] {
    const chunk: KeptEntry[] = [];
    this.journal.scan(this.cursor, false, (kept) => {
      this.cursor = kept.id;
      if (this.matches(kept)) chunk.push(kept);
      return chunk.length < ENTRIES_PER_CHUNK;
    });
    return chunk;
  }

  /** The newest `count` matching entries after the cursor, which moves to the journal's end. */
  private readNewest(count: number): KeptEntry[] {
    let matching: KeptEntry[] = [];
    this.journal.scan(this.cursor, false, (kept) => {
      this.cursor = kept.id;
      if (this.matches(kept) && matching.push(kept) >= 2 * count) matching = matching.slice(-count);
      return true;
    });
    return matching.slice(-count);
  }

  heartbeat(): void {
    if ((this.controller.desiredSize ?? 0) > 0) this.controller.enqueue(encoder.encode(HEARTBEAT));
  }

  close(): void {
    this.controller.close();
  }
}

/** The client's socket, when the stream goes over one (not in process). */
export type ClientConnection = Pick<EventEmitter, 'once' | 'off'>;

/**
 * The journal's server-sent event streams. The journal calls back only while one is open, and
 * the streams read it on the next turn of the event loop, or JOURNAL_STREAM_INTERVAL_MS after
 * they last did: the request that was recorded is not kept waiting, and a burst of requests goes
 * out in a chunk per interval.
 */
export class JournalStreams {
  /** The open streams, each with what stops watching its connection. */
  private readonly streams = new Map<JournalStream, () => void>();
  private stopListening: (() => void) | null = null;
  private heartbeats: NodeJS.Timeout | null = null;
  /** Cancels the wake-up to come, when one is. */
  private cancelWakeUp: (() => void) | null = null;
  /** When the streams last read the journal (performance.now()). */
  private lastWakeUp = -Infinity;

  constructor(private readonly journal: RequestJournal) {}

  /**
   * A stream of the entries matching the filter, as they are recorded. A `since` id sends
   * those after it first (without one, from now on); an id beyond the latest is from before a
   * reset, and everything is sent again. Null when MAX_JOURNAL_STREAMS are open.
   *
   * A client that ends its side of `connection` has gone (EventSource and fetch do when they
   * close): the stream ends. The server keeps a half-open connection until its reply is sent,
   * and this reply has no end of its own.
   */
  open(
    filter: JournalFilter,
    connection?: ClientConnection,
    shape: JournalStreamShape = 'entries',
    newest?: number,
  ): ReadableStream<Uint8Array> | null {
    if (this.streams.size >= MAX_JOURNAL_STREAMS) return null;
    const { since } = filter;
    const latest = this.journal.latestId;
    const fromId = since === undefined || 'id' in since;
    const cursor = since === undefined ? latest : 'id' in since && since.id <= latest ? since.id : 0;
    // The cursor stands for a `since` id; a `since` time is a filter on every entry.
    const matches = entryMatcher(fromId ? { ...filter, since: undefined } : filter);
    const stream: JournalStream = new JournalStream(this.journal, matches, cursor, shape, newest, () =>
      this.remove(stream),
    );
    const gone = () => this.end(stream);
    connection?.once('end', gone);
    this.streams.set(stream, () => connection?.off('end', gone));
    if (this.streams.size === 1) {
      this.stopListening = this.journal.listen(() => this.scheduleWakeUp());
      this.heartbeats = setInterval(
        () => this.streams.forEach((_stop, open) => open.heartbeat()),
        JOURNAL_STREAM_HEARTBEAT_MS,
      );
    }
    return stream.body;
  }

  private scheduleWakeUp(): void {
    if (this.cancelWakeUp !== null) return;
    const wakeUp = () => {
      this.cancelWakeUp = null;
      this.lastWakeUp = performance.now();
      this.streams.forEach((_stop, open) => open.fill());
    };
    const wait = this.lastWakeUp + JOURNAL_STREAM_INTERVAL_MS - performance.now();
    if (wait <= 0) {
      const immediate = setImmediate(wakeUp);
      this.cancelWakeUp = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(wakeUp, wait);
      this.cancelWakeUp = () => clearTimeout(timer);
    }
  }

  private remove(stream: JournalStream): void {
    this.streams.get(stream)?.();
    this.streams.delete(stream);
    if (this.streams.size > 0) return;
    this.stopListening?.();
    this.stopListening = null;
    clearInterval(this.heartbeats ?? undefined);
    this.heartbeats = null;
    this.cancelWakeUp?.();
    this.cancelWakeUp = null;
  }

  /** Ends a stream still open (its reply completes). */
  private end(stream: JournalStream): void {
    if (!this.streams.has(stream)) return;
    stream.close();
    this.remove(stream);
  }

  /** Ends every stream (the instance stops). */
  closeAll(): void {
    for (const stream of [...this.streams.keys()]) this.end(stream);
  }
}
