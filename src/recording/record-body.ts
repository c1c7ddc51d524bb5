import {
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  type BrotliDecompress,
  type Gunzip,
  type Inflate,
} from 'node:zlib';

/** The most of a body a recording keeps: a longer body is kept as its first part, marked `_truncated`. */
export const RECORDED_BODY_LIMIT = 1024 * 1024;

type Decoder = Gunzip | Inflate | BrotliDecompress;

/**
 * The Content-Encodings a recording decodes; a cut stream (a client gone, an upstream broken off) decodes as far as it
 * came.
 */
const DECODERS: Readonly<Record<string, () => Decoder>> = {
  gzip: () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
  'x-gzip': () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
  deflate: () => createInflate({ finishFlush: constants.Z_SYNC_FLUSH }),
  br: () => createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }),
};

/**
 * A copy of a body as it streams past, for the recording: its first RECORDED_BODY_LIMIT bytes
 * as HAR keeps bodies (decoded from gzip, deflate or br: a client that sends Accept-Encoding
 * gets compressed answers, whose JSON the masking must read), and its sizes. The rest of the
 * body only passes through: a copy never holds more than the limit.
 */
export class BodyCopy {
  private readonly head: Buffer[] = [];
  private kept = 0;
  /** Bytes as they came, before decoding. */
  wireSize = 0;
  /** Bytes once decoded. */
  size = 0;
  /** Why the body cannot be kept (an encoding not decoded, a stream that does not decode). */
  unreadable: string | null = null;
  private readonly decoder: Decoder | null = null;
  private readonly decoded: Promise<void> = Promise.resolve();

  constructor(contentEncoding: string | undefined) {
    const coding = contentEncoding?.trim().toLowerCase() ?? '';
    if (coding === '' || coding === 'identity') return;
    const makeDecoder = DECODERS[coding];
    if (makeDecoder === undefined) {
      this.unreadable = `not kept: Content-Encoding ${coding} is not one a recording decodes (gzip, deflate, br)`;
      return;
    }
    const decoder = makeDecoder();
    decoder.on('data', (chunk: Buffer) => this.keep(chunk));
    decoder.on('error', (error) => {
      this.unreadable = `not kept: it does not decode as ${coding} (${error.message})`;
    });
    this.decoded = new Promise<void>((closed) => decoder.once('close', () => closed()));
    this.decoder = decoder;
  }

  add(chunk: Buffer): void {
    this.wireSize += chunk.byteLength;
    if (this.unreadable !== null) return;
    if (this.decoder) this.decoder.write(chunk);
    else this.keep(chunk);
  }

  /** Once the body has ended (or was cut short): waits for the decoder to give its last bytes. */
  async end(): Promise<void> {
    if (this.decoder && !this.decoder.destroyed) this.decoder.end();
    await this.decoded;
  }

  /** The bytes kept: all of them, or the first RECORDED_BODY_LIMIT. */
  get bytes(): Buffer {
    return Buffer.concat(this.head);
  }

  get truncated(): boolean {
    return this.size > this.kept;
  }

  private keep(chunk: Buffer): void {
    this.size += chunk.byteLength;
    const room = RECORDED_BODY_LIMIT - this.kept;
    if (room <= 0) return;
    // A part of a chunk is copied: a view would hold the whole chunk.
    const part = chunk.byteLength <= room ? chunk : Buffer.from(chunk.subarray(0, room));
    this.head.push(part);
    this.kept += part.byteLength;
  }
}
