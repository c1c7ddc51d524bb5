import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { textHead } from './text-head.ts';

/** What a response wrote: its first bytes, its whole size, its content type. */
export interface CapturedResponse {
  head: Buffer;
  /** What the head's text is decoded from: the text written (most answers are one string), or the head. */
  source: string | Buffer;
  size: number;
  contentType: string | null;
  /** The headers the response was given (writeHead's and those set before it), as name and value pairs. */
  headerPairs(): [string, string][];
}

/** A Node header value as one string. */
export const headerText = (value: string | string[] | number | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(', ') : String(value);

/** The content type in writeHead's headers: an object, or a list of names and values (flat or in pairs). */
function contentTypeIn(headers: unknown): string | null {
  if (Array.isArray(headers)) {
    const flat = headers.flat() as unknown[];
    for (let i = 0; i + 1 < flat.length; i += 2)
      if (String(flat[i]).toLowerCase() === 'content-type') return String(flat[i + 1]);
    return null;
  }
  if (headers === undefined) return null;
  for (const [name, value] of Object.entries(headers as object))
    if (name.toLowerCase() === 'content-type') return headerText(value as string);
  return null;
}

/** The name and value pairs of writeHead's headers: an object, or a list of names and values (flat or in pairs). */
function headerPairsIn(headers: unknown): [string, string][] {
  if (Array.isArray(headers)) {
    const flat = headers.flat() as unknown[];
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([String(flat[i]), String(flat[i + 1])]);
    return pairs;
  }
  if (headers === undefined || headers === null) return [];
  return Object.entries(headers as object).flatMap(([name, value]) => {
    const text = headerText(value as string | string[] | number | undefined);
    return text === null ? [] : [[name, text] as [string, string]];
  });
}

/**
 * Bytes that nothing writes to once made: a capture may keep them, or one copy of their head, instead of a copy per
 * response.
 */
const unchangingBodies = new WeakSet<Uint8Array>();

/** An answer's bytes kept to be sent many times (a cached read). */
export type UnchangingBody = Uint8Array<ArrayBuffer>;

/** `text` as bytes that nothing writes to again. */
export function unchangingBody(text: string): UnchangingBody {
  const bytes = new TextEncoder().encode(text);
  unchangingBodies.add(bytes);
  return bytes;
}

/**
 * The last unchanging body whose head was taken, and that head (see textHead, the same for text): a journal keeps one
 * per response.
 */
let lastBody: Uint8Array | null = null;
let lastLength = 0;
let lastHead: Buffer = Buffer.alloc(0);

/**
 * The first `length` bytes of `bytes` as a buffer of their own: a copy, as a writer may reuse its buffer, unless
 * nothing writes to it.
 */
function bytesHead(bytes: Uint8Array, length: number): Buffer {
  if (!unchangingBodies.has(bytes)) return Buffer.from(bytes.subarray(0, length));
  if (bytes !== lastBody || length !== lastLength) {
    lastHead =
      bytes.byteLength <= length
        ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : Buffer.from(bytes.subarray(0, length));
    lastBody = bytes;
    lastLength = length;
  }
  return lastHead;
}

/**
 * Keeps the first `limit` bytes a response writes and counts the rest, by wrapping its write
 * and end: wrappers of end installed before it see the last chunk already taken. Text chunks
 * within the limit are kept as they are (a string is immutable, and an API answer is mostly one
 * cached string), the head of a longer one and bytes are copied (a slice would keep the whole
 * chunk alive, a writer may reuse its buffer) but for an unchanging body's; `captured()` encodes
 * the head when asked.
 */
export class ResponseCapture {
  private readonly chunks: (string | Buffer)[] = [];
  /** Given to writeHead (as @hono/node-server gives every header), where getHeader cannot see them. */
  private headHeaders: unknown = undefined;
  /** Characters or bytes kept: a character is at least a byte, so this bounds the bytes from below. */
  private kept = 0;
  private size = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly limit: number,
  ) {
    // The wrappers are functions, called on the response (`this`); these reach the capture.
    const noteHeadHeaders = (args: unknown[]) => {
      this.headHeaders = args.find((arg) => typeof arg === 'object' && arg !== null);
    };
    const take = (chunk: unknown) => this.take(chunk);
    const originalWriteHead = res.writeHead;
    res.writeHead = function writeHead(this: ServerResponse, ...args: unknown[]) {
      noteHeadHeaders(args);
      return (originalWriteHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    const originalWrite = res.write;
    res.write = function write(this: ServerResponse, ...args: unknown[]) {
      take(args[0]);
      return (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
    } as ServerResponse['write'];
    const originalEnd = res.end;
    res.end = function end(this: ServerResponse, ...args: unknown[]) {
      take(args[0]);
      return (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['end'];
  }

  private take(chunk: unknown): void {
    const wanted = this.limit - this.kept;
    if (typeof chunk === 'string') {
      this.size += Buffer.byteLength(chunk);
      if (wanted > 0) this.keep(textHead(chunk, wanted));
    } else if (chunk instanceof Uint8Array) {
      this.size += chunk.byteLength;
      if (wanted > 0) this.keep(bytesHead(chunk, wanted));
    }
  }

  private keep(chunk: string | Buffer): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  /** What was written so far; the content type is read now, the head encoded when `head` is first read. */
  captured(): CapturedResponse {
    const kept = this.chunks.length === 1 ? this.chunks[0]! : this.chunks;
    return new WrittenHead(
      kept,
      this.limit,
      this.size,
      headerText(this.res.getHeader('content-type')) ?? contentTypeIn(this.headHeaders),
      this.res.getHeaders(),
      this.headHeaders,
    );
  }
}

/**
 * A class, not an object literal with getters: a journal keeps one per request, and such a literal is made a dictionary
 * with its own getters.
 */
class WrittenHead implements CapturedResponse {
  private encoded: Buffer | undefined;

  constructor(
    /** One chunk alone (most answers are one), not in an array: the array would be kept with it. */
    private readonly kept: string | Buffer | readonly (string | Buffer)[],
    private readonly limit: number,
    readonly size: number,
    readonly contentType: string | null,
    /** Set on the response (setHeader) before writeHead. */
    private readonly setHeaders: OutgoingHttpHeaders,
    /** Given to writeHead. */
    private readonly headHeaders: unknown,
  ) {}

  headerPairs(): [string, string][] {
    return [...headerPairsIn(this.setHeaders), ...headerPairsIn(this.headHeaders)];
  }

  get head(): Buffer {
    const { kept } = this;
    // One chunk of bytes is kept within the limit already.
    if (Buffer.isBuffer(kept)) return kept;
    const chunks = typeof kept === 'string' ? [kept] : kept;
    return (this.encoded ??= Buffer.concat(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)),
    ).subarray(0, this.limit));
  }

  get source(): string | Buffer {
    return typeof this.kept === 'string' ? this.kept : this.head;
  }
}

/** Status recorded for a request whose client went away before a response was sent. */
export const ABORTED_STATUS = 499;

/** How a response ended: its status, whether the connection closed before it was ended, and what it wrote. */
export interface ResponseEnd<Captured extends CapturedResponse | null> {
  /** ABORTED_STATUS when the connection closed before any header went out. */
  status: number;
  cut: boolean;
  written: Captured;
}

/**
 * Calls `done` once, as the response is ended (before the client can have read all of it) or
 * when the connection closes first; with `captureBytes`, with the first bytes it wrote.
 */
export function whenResponseEnds<Bytes extends number | null>(
  res: ServerResponse,
  captureBytes: Bytes,
  done: (end: ResponseEnd<Bytes extends number ? CapturedResponse : null>) => void,
): void {
  let finished = false;
  const finish = (status: number, cut: boolean) => {
    if (finished) return;
    finished = true;
    done({ status, cut, written: (capture?.captured() ?? null) as Bytes extends number ? CapturedResponse : null });
  };
  const originalEnd = res.end;
  res.end = function end(this: ServerResponse, ...args: unknown[]) {
    finish(res.statusCode, false);
    return (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['end'];
  // Installed after the wrapper of end above, so the last chunk is taken before `done` is called.
  const capture = captureBytes === null ? null : new ResponseCapture(res, captureBytes);
  // `on`, not `once`: `finish` acts once anyway, and once's wrapper would cost every response.
  res.on('close', () => finish(res.headersSent ? res.statusCode : ABORTED_STATUS, true));
}
