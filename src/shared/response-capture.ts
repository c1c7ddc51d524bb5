import type { ServerResponse } from 'node:http';

/** What a response wrote: its first bytes, its whole size, its content type. */
export interface CapturedResponse {
  head: Buffer;
  size: number;
  contentType: string | null;
}

/** A Node header value as one string. */
export const headerText = (value: string | string[] | number | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(', ') : String(value);

/**
 * Keeps the first `limit` bytes a response writes and counts the rest, by wrapping its write
 * and end: wrappers of end installed before it see the last chunk already taken.
 */
export class ResponseCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private size = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly limit: number,
  ) {
    const capture = this;
    const originalWrite = res.write;
    res.write = function write(this: ServerResponse, ...args: unknown[]) {
      capture.take(args[0]);
      return (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
    } as ServerResponse['write'];
    const originalEnd = res.end;
    res.end = function end(this: ServerResponse, ...args: unknown[]) {
      capture.take(args[0]);
      return (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['end'];
  }

  private take(chunk: unknown): void {
    if (typeof chunk === 'string') {
      this.size += Buffer.byteLength(chunk);
      // No character is less than a byte: this many characters hold all the bytes still wanted.
      if (this.kept < this.limit) this.keep(Buffer.from(chunk.slice(0, this.limit - this.kept)));
    } else if (chunk instanceof Uint8Array) {
      this.size += chunk.byteLength;
      if (this.kept < this.limit) this.keep(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
  }

  private keep(bytes: Buffer): void {
    const head = bytes.subarray(0, this.limit - this.kept);
    this.chunks.push(Buffer.from(head));
    this.kept += head.length;
  }

  captured(): CapturedResponse {
    return { head: Buffer.concat(this.chunks), size: this.size, contentType: headerText(this.res.getHeader('content-type')) };
  }
}

/**
 * Calls `done` once with what the response wrote and its status, as it is ended (before the
 * client can have read all of it), or with `abortedStatus` when the connection closes first.
 */
export function whenResponseEnds(res: ServerResponse, limit: number, abortedStatus: number, done: (status: number, response: CapturedResponse) => void): void {
  let finished = false;
  const finish = (status: number) => {
    if (finished) return;
    finished = true;
    done(status, capture.captured());
  };
  const originalEnd = res.end;
  res.end = function end(this: ServerResponse, ...args: unknown[]) {
    finish(res.statusCode);
    return (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['end'];
  const capture = new ResponseCapture(res, limit);
  res.once('close', () => finish(res.headersSent ? res.statusCode : abortedStatus));
}
