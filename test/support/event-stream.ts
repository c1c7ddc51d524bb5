/** One server-sent event as EventSource reads it, or a comment line (`comment` set, the rest empty). */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/**
 * Reads a text/event-stream body event by event, as EventSource parses it (fields per line,
 * an empty line ends an event), comments included so a test sees the heartbeats.
 */
export class EventStreamReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffered = '';
  private readonly ready: ServerSentEvent[] = [];

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** The next event or comment; null once the stream has ended. */
  async next(): Promise<ServerSentEvent | null> {
    while (this.ready.length === 0) {
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.buffered += this.decoder.decode(value, { stream: true });
      this.parse();
    }
    return this.ready.shift()!;
  }

  /** The next `count` events named `event`, skipping comments and other events. */
  async events(count: number, event = 'request'): Promise<ServerSentEvent[]> {
    const found: ServerSentEvent[] = [];
    while (found.length < count) {
      const next = await this.next();
      if (next === null) throw new Error(`the stream ended after ${found.length} of ${count} ${event} events`);
      if (next.event === event) found.push(next);
    }
    return found;
  }

  /** The next comment, skipping events. */
  async comment(): Promise<string> {
    for (;;) {
      const next = await this.next();
      if (next === null) throw new Error('the stream ended before a comment');
      if (next.comment !== undefined) return next.comment;
    }
  }

  /** Goes away as a client does: the server sees the connection close. */
  async cancel(): Promise<void> {
    await this.reader.cancel();
  }

  private parse(): void {
    let end: number;
    while ((end = this.buffered.indexOf('\n\n')) !== -1) {
      const block = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 2);
      const event: ServerSentEvent = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.ready.push({ comment: line.slice(1).trim() });
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id' || field === 'event') event[field] = value;
        else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      }
      if (event.data !== undefined) this.ready.push(event);
    }
  }
}

/** Opens a stream with fetch; `headers` e.g. Last-Event-ID. A reader for a 200, else the refusal to read. */
export async function openEventStream(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  return { response, reader: response.ok ? new EventStreamReader(response.body!) : null };
}
