/** Server-sent events (text/event-stream): the headers, an event's text, and a reader of a stream's events. */

export const EVENT_STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** One event as EventSource reads it, or a comment line (`comment` set, the rest empty). */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** An event's text: its id (when it has one), its name and its data, a `data:` line per line of it. */
export function eventText({ id, event, data }: { id?: string | number; event: string; data: string }): string {
  const dataLines = data.includes('\n')
    ? data
        .split('\n')
        .map((line) => `data: ${line}`)
        .join('\n')
    : `data: ${data}`;
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${dataLines}\n\n`;
}

export const commentText = (comment: string) => `: ${comment}\n\n`;

/** One event's lines, parsed as EventSource parses them. */
function parseEvent(block: string): ServerSentEvent {
  const event: ServerSentEvent = {};
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) {
      event.comment = line.slice(1).trim();
      continue;
    }
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id' || field === 'event') event[field] = value;
    else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
  }
  return event;
}

/** The events of a text/event-stream body as they arrive (an empty line ends one), comments included. */
export function readEvents(): TransformStream<Uint8Array, ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  return new TransformStream({
    transform(chunk, controller) {
      buffered += decoder.decode(chunk, { stream: true }).replaceAll('\r\n', '\n');
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        controller.enqueue(parseEvent(buffered.slice(0, end)));
        buffered = buffered.slice(end + 2);
      }
    },
  });
}
