import type { EventEmitter } from 'node:events';
import { commentText, eventText } from '../shared/event-stream.ts';
import { entryMatcher, type JournalFilter } from './filter.ts';
import type { KeptEntry, RequestJournal } from './journal.ts';
import type { JournalEntry } from './schemas.ts';

/** Journal streams open at once per instance (a browser opens at most 6 connections to a host). */
export const MAX_JOURNAL_STREAMS = 16;
/** A comment line this often keeps proxies and clients from closing an idle stream. */
export const JOURNAL_STREAM_HEARTBEAT_MS = 15_000;
/** Entries sent in one chunk at most: a long replay goes out as the client reads it. */
const ENTRIES_PER_CHUNK = 200;

const encoder = new TextEncoder();

const requestEvent = (entry: JournalEntry) =>
  eventText({ id: entry.id, event: 'request', data: JSON.stringify(entry) });
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
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    private readonly journal: RequestJournal,
    private readonly matches: (kept: KeptEntry) => boolean,
    /** The id of the last entry looked at. */
    private cursor: number,
    onCancel: () => void,
  ) {
    this.generation = journal.generation;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        controller.enqueue(encoder.encode(OPENING));
      },
      pull: () => this.fill(),
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
    while ((this.controller.desiredSize ?? 0) > 0) {
      const events: string[] = [];
      this.journal.scan(this.cursor, false, (kept) => {
        this.cursor = kept.id;
        if (this.matches(kept)) events.push(requestEvent(kept.entry()));
        return events.length < ENTRIES_PER_CHUNK;
      });
      if (events.length === 0) return;
      this.controller.enqueue(encoder.encode(events.join('')));
    }
  }

  heartbeat(): void {
    if ((this.controller.desiredSize ?? 0) > 0) this.controller.enqueue(encoder.encode(HEARTBEAT));
  }

  close(): void {
    this.controller.close();
  }
}

/**
 * The journal's server-sent event streams. The journal calls back only while one is open, and
 * the streams read it on the next turn of the event loop: the request that was recorded is not
 * kept waiting, and a burst of requests goes out in one chunk.
 */
/** The client's socket, when the stream goes over one (not in process). */
export type ClientConnection = Pick<EventEmitter, 'once' | 'off'>;

export class JournalStreams {
  /** The open streams, each with what stops watching its connection. */
  private readonly streams = new Map<JournalStream, () => void>();
  private stopListening: (() => void) | null = null;
  private heartbeats: NodeJS.Timeout | null = null;
  private wakeUp: NodeJS.Immediate | null = null;

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
  open(filter: JournalFilter, connection?: ClientConnection): ReadableStream<Uint8Array> | null {
    if (this.streams.size >= MAX_JOURNAL_STREAMS) return null;
    const { since } = filter;
    const latest = this.journal.latestId;
    const fromId = since === undefined || 'id' in since;
    const cursor = since === undefined ? latest : 'id' in since && since.id <= latest ? since.id : 0;
    // The cursor stands for a `since` id; a `since` time is a filter on every entry.
    const matches = entryMatcher(fromId ? { ...filter, since: undefined } : filter);
    const stream: JournalStream = new JournalStream(this.journal, matches, cursor, () => this.remove(stream));
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
    this.wakeUp ??= setImmediate(() => {
      this.wakeUp = null;
      this.streams.forEach((_stop, open) => open.fill());
    });
  }

  private remove(stream: JournalStream): void {
    this.streams.get(stream)?.();
    this.streams.delete(stream);
    if (this.streams.size > 0) return;
    this.stopListening?.();
    this.stopListening = null;
    clearInterval(this.heartbeats ?? undefined);
    this.heartbeats = null;
    clearImmediate(this.wakeUp ?? undefined);
    this.wakeUp = null;
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
