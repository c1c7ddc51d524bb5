/**
 * The multipart/form-data body of a browser form upload (RFC 7578), read as it arrives: the
 * fields before the file are read whole, within S3's bound on them, so that the form can be
 * authenticated before its file is read; then the file's content is handed on piece by piece,
 * never held whole. Fields after the file are not read (S3 ignores them).
 */
import type { IncomingMessage } from 'node:http';

import { errors, GatewayError } from '../../s3-errors.ts';

/** S3's MaxPostPreDataLengthBytes: the bytes of a form before its file's content. */
export const MAX_FORM_FIELDS_BYTES = 20 * 1024;

/** RFC 2046: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70;
const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
const DASH_DASH = Buffer.from('--');

export interface FormHead {
  /** The fields before the file, by lower-case name (S3 reads names so); the first of a repeated name. */
  fields: Map<string, string>;
  /** The `filename` of the file's part, which `${filename}` in the key stands for. */
  fileName: string;
}

interface PartHeaders {
  name: string;
  fileName: string | null;
}

const malformed = () => new GatewayError(errors.malformedForm());
const fieldsTooLarge = () => new GatewayError(errors.formFieldsTooLarge(MAX_FORM_FIELDS_BYTES));

/**
 * A header's value and `; name=value` parameters (names in lower case, the first of a repeated
 * one), split outside quotes. A quoted value runs to the next `"`: browsers escape no character
 * with a backslash (a Windows path keeps its backslashes).
 */
function headerParameters(text: string): { value: string; parameters: Map<string, string> } {
  const pieces: string[] = [];
  let start = 0;
  let quoted = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (char === '"') quoted = !quoted;
    else if (char === ';' && !quoted) {
      pieces.push(text.slice(start, at));
      start = at + 1;
    }
  }
  pieces.push(text.slice(start));
  const parameters = new Map<string, string>();
  for (const piece of pieces.slice(1)) {
    const equals = piece.indexOf('=');
    if (equals === -1) continue;
    const name = piece.slice(0, equals).trim().toLowerCase();
    const value = piece.slice(equals + 1).trim();
    const unquoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    if (!parameters.has(name)) parameters.set(name, unquoted);
  }
  return { value: pieces[0]!.trim().toLowerCase(), parameters };
}

/** The boundary of a `multipart/form-data; boundary=...` content type; MalformedPOSTRequest without one. */
export function formBoundary(contentType: string): string {
  const boundary = headerParameters(contentType).parameters.get('boundary');
  if (boundary === undefined || boundary === '' || boundary.length > MAX_BOUNDARY_LENGTH) throw malformed();
  return boundary;
}

/** Browsers write `"`, CR and LF in names as `%22`, `%0D` and `%0A` (the HTML standard's form encoding). */
const unescapeName = (text: string) => text.replace(/%0A/gi, '\n').replace(/%0D/gi, '\r').replace(/%22/g, '"');

/** The name and file name of a part, from its Content-Disposition (`form-data; name="file"; filename="a.txt"`). */
function parsePartHeaders(block: Buffer): PartHeaders {
  let disposition = '';
  for (const line of block.toString('utf8').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) throw malformed();
    if (line.slice(0, colon).trim().toLowerCase() === 'content-disposition') disposition = line.slice(colon + 1);
  }
  const { value, parameters } = headerParameters(disposition);
  const name = parameters.get('name');
  if (value !== 'form-data' || name === undefined) throw malformed();
  const fileName = parameters.get('filename');
  return { name: unescapeName(name), fileName: fileName === undefined ? null : unescapeName(fileName) };
}

export class FormDataReader {
  private readonly pieces: AsyncIterableIterator<Buffer>;
  /** `\r\n--<boundary>`, which ends every part. */
  private readonly delimiter: Buffer;
  /** Bytes received and not yet taken. */
  private buffer: Buffer = Buffer.alloc(0);
  /** Bytes taken so far. */
  private taken = 0;
  private ended = false;
  /** Until the file's content starts, the bytes read are bounded by MAX_FORM_FIELDS_BYTES. */
  private readingFields = true;

  constructor(req: IncomingMessage, boundary: string) {
    // Not destroyed when the form is refused before its end: the refusal still has to be sent.
    this.pieces = req.iterator({ destroyOnReturn: false });
    // A content type header is Latin-1 text: one character a byte.
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /**
   * Reads the fields up to the start of the file's content. Throws MaxPostPreDataLengthExceeded
   * past MAX_FORM_FIELDS_BYTES, InvalidArgument when the form ends without a file (or its `file`
   * field is not a file), MalformedPOSTRequest when it is not multipart/form-data.
   */
  async readHead(): Promise<FormHead> {
    const fields = new Map<string, string>();
    await this.skipPreamble();
    for (;;) {
      if (await this.atFormEnd()) throw new GatewayError(errors.noFormFile());
      const part = parsePartHeaders(await this.readPartHeaders());
      const name = part.name.toLowerCase();
      if (name === 'file') {
        if (part.fileName === null) throw new GatewayError(errors.noFormFile());
        if (this.taken > MAX_FORM_FIELDS_BYTES) throw fieldsTooLarge();
        this.readingFields = false;
        return { fields, fileName: part.fileName };
      }
      const value = await this.readUntil(this.delimiter);
      // A part with a file name is a field too, as S3 reads it: clients such as Python's
      // requests send every field that way (`files=`); only `file` is the object's content.
      if (!fields.has(name)) fields.set(name, value.toString('utf8'));
    }
  }

  /**
   * The file's content as it arrives, up to the delimiter that ends its part (then checked to
   * close the form or open another part). Call after readHead.
   */
  async *fileContent(): AsyncGenerator<Buffer> {
    const { delimiter } = this;
    for (;;) {
      const end = this.buffer.indexOf(delimiter);
      if (end !== -1) {
        if (end > 0) yield this.take(end);
        this.take(delimiter.length);
        await this.atFormEnd();
        return;
      }
      // All but the last bytes, which may begin the delimiter.
      const safe = this.buffer.length - (delimiter.length - 1);
      if (safe > 0) yield this.take(safe);
      if (!(await this.fill())) throw malformed();
    }
  }

  /** Reads and drops what follows the file (S3 ignores it), up to `limit` bytes; a longer rest stays unread. */
  async skipRest(limit: number): Promise<void> {
    const start = this.taken;
    do this.take(this.buffer.length);
    while (this.taken - start <= limit && (await this.fill()));
  }

  /** Stops reading (the rest of the body stays unread). */
  async close(): Promise<void> {
    await this.pieces.return?.();
  }

  /** The body's bytes before its first boundary are a preamble, which no one reads. */
  private async skipPreamble(): Promise<void> {
    const dashBoundary = this.delimiter.subarray(CRLF.length);
    while (this.buffer.length < dashBoundary.length && (await this.fill()));
    if (this.buffer.subarray(0, dashBoundary.length).equals(dashBoundary)) this.take(dashBoundary.length);
    else await this.readUntil(this.delimiter);
  }

  /**
   * After a boundary: true when `--` closes the form; else drops the transport padding (spaces
   * and tabs, as they arrive) and the CRLF before the next part.
   */
  private async atFormEnd(): Promise<boolean> {
    let padded = false;
    for (;;) {
      const padding = this.buffer.findIndex((byte) => byte !== 0x20 && byte !== 0x09);
      padded ||= padding !== 0 && this.buffer.length > 0;
      this.take(padding === -1 ? this.buffer.length : padding);
      if (this.buffer.length >= CRLF.length) {
        if (!padded && this.buffer.subarray(0, DASH_DASH.length).equals(DASH_DASH)) return true;
        if (!this.buffer.subarray(0, CRLF.length).equals(CRLF)) throw malformed();
        this.take(CRLF.length);
        return false;
      }
      if (!(await this.fill())) throw malformed();
    }
  }

  /** A part's header lines without the blank line that ends them (none: the part starts with it). */
  private async readPartHeaders(): Promise<Buffer> {
    while (this.buffer.length < CRLF.length && (await this.fill()));
    if (this.buffer.subarray(0, CRLF.length).equals(CRLF)) {
      this.take(CRLF.length);
      return Buffer.alloc(0);
    }
    return this.readUntil(HEADERS_END);
  }

  /** The bytes before `marker` (which is taken too), reading more as needed. */
  private async readUntil(marker: Buffer): Promise<Buffer> {
    let from = 0;
    for (;;) {
      const at = this.buffer.indexOf(marker, from);
      if (at !== -1) {
        const before = this.take(at);
        this.take(marker.length);
        return before;
      }
      from = Math.max(0, this.buffer.length - marker.length + 1);
      if (!(await this.fill())) throw malformed();
    }
  }

  /**
   * Receives the next piece of the body; false when it has ended. While the fields are read,
   * MaxPostPreDataLengthExceeded once they outgrow their bound.
   */
  private async fill(): Promise<boolean> {
    if (this.readingFields && this.taken + this.buffer.length > MAX_FORM_FIELDS_BYTES) throw fieldsTooLarge();
    if (this.ended) return false;
    const next = await this.pieces.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffer = this.buffer.length === 0 ? next.value : Buffer.concat([this.buffer, next.value]);
    return true;
  }

  private take(length: number): Buffer {
    const taken = this.buffer.subarray(0, length);
    this.buffer = this.buffer.subarray(length);
    this.taken += length;
    return taken;
  }
}
