/**
 * Decoder of aws-chunked request bodies (the `STREAMING-*` values of `x-amz-content-sha256`):
 *
 *   <hex size>[;chunk-signature=<sig>]\r\n<data>\r\n ... 0[;chunk-signature=<sig>]\r\n
 *   [<trailer name>:<value>\r\n ... [x-amz-trailer-signature:<sig>\r\n]]\r\n
 *
 * It is fed the body piece by piece as it arrives and hands back the decoded bytes, so a body of
 * any size passes through in bounded memory: a signed chunk is hashed as it passes and its
 * signature checked at its end, so its bytes are handed back before they are verified. The
 * caller makes nothing of them visible before `end()` (every chunk and the trailer verified).
 */
import { createHash, type Hash } from 'node:crypto';

import { errors, GatewayError } from '../../s3-errors.ts';
import type { ChunkSignatures } from '../auth/sigv4.ts';

/** S3 refuses chunks smaller than this, except the last one carrying data. */
export const MIN_CHUNK_SIZE = 8192;
/** Longer chunk-size or trailer lines are not aws-chunked framing. */
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;
const TRAILER_SIGNATURE = 'x-amz-trailer-signature';

const UNSIGNED_CHUNK_HEADER = /^([0-9a-fA-F]{1,16})$/;
const SIGNED_CHUNK_HEADER = /^([0-9a-fA-F]{1,16});chunk-signature=([0-9a-f]{64})$/;
const TRAILER_LINE = /^([^:\s]+)[ \t]*:[ \t]*(.*?)[ \t]*$/;

export interface AwsChunkedOptions {
  /** Chunk signatures to check (signed variants), or null for unsigned chunks. */
  signatures: ChunkSignatures | null;
  /** The body ends with a signed trailer (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`). */
  signedTrailer: boolean;
}

type DecoderState = 'size' | 'data' | 'data-end' | 'trailer' | 'done';

const incomplete = () => new GatewayError(errors.incompleteBody());

export class AwsChunkedDecoder {
  private state: DecoderState = 'size';
  /** Bytes of the line being read (a chunk header, a trailer line or a CRLF). */
  private line: Buffer[] = [];
  private lineBytes = 0;
  private chunkRemaining = 0;
  private chunkSignature = '';
  /** The SHA-256 of the current chunk's data so far, when chunks are signed. */
  private chunkHash: Hash | null = null;
  private previousChunkSize: number | null = null;
  private trailerBytes = 0;
  /** The trailer lines as received, which its signature covers. */
  private readonly trailerLines: string[] = [];
  private readonly trailerFields = new Map<string, string>();
  private trailerSignature: string | null = null;

  constructor(private readonly options: AwsChunkedOptions) {}

  /** Decodes the next piece of the raw body into the data bytes it completes (possibly none). */
  decode(piece: Buffer): Buffer[] {
    const decoded: Buffer[] = [];
    let at = 0;
    while (at < piece.length) {
      if (this.state === 'done') throw incomplete();
      if (this.state === 'data') {
        const data = piece.subarray(at, at + this.chunkRemaining);
        at += data.length;
        this.takeData(data);
        decoded.push(data);
        continue;
      }
      const lineEnd = this.readLine(piece, at);
      at = lineEnd ?? piece.length;
      if (lineEnd !== undefined) this.endLine(this.takeLine());
    }
    return decoded;
  }

  /**
   * Called once the raw body has ended: throws unless it ended exactly after the final chunk and
   * the trailer. Answers the trailer's fields (lower-case names) without its signature.
   */
  end(): Map<string, string> {
    if (this.state !== 'done') throw incomplete();
    return this.trailerFields;
  }

  /** Appends bytes up to and including the next LF to the line; answers where the line ended, if it did. */
  private readLine(piece: Buffer, from: number): number | undefined {
    const lf = piece.indexOf(0x0a, from);
    const end = lf === -1 ? piece.length : lf + 1;
    this.line.push(piece.subarray(from, end));
    this.lineBytes += end - from;
    if (this.lineBytes > MAX_LINE_BYTES) throw this.framingError();
    return lf === -1 ? undefined : end;
  }

  /** The completed line without its CRLF; a line not ended by CRLF is not aws-chunked framing. */
  private takeLine(): string {
    const line = Buffer.concat(this.line, this.lineBytes);
    this.line = [];
    this.lineBytes = 0;
    if (line.length < 2 || line[line.length - 2] !== 0x0d) throw this.framingError();
    return line.toString('latin1', 0, line.length - 2);
  }

  private framingError(): GatewayError {
    return this.state === 'trailer' ? new GatewayError(errors.malformedTrailer()) : incomplete();
  }

  private endLine(line: string): void {
    switch (this.state) {
      case 'size':
        return this.startChunk(line);
      case 'data-end':
        if (line !== '') throw incomplete();
        this.state = 'size';
        return;
      case 'trailer':
        return this.addTrailerLine(line);
    }
  }

  private startChunk(header: string): void {
    const match = (this.options.signatures ? SIGNED_CHUNK_HEADER : UNSIGNED_CHUNK_HEADER).exec(header);
    if (!match) throw incomplete();
    const size = parseInt(match[1]!, 16);
    this.chunkSignature = match[2] ?? '';
    if (size > 0 && this.previousChunkSize !== null && this.previousChunkSize < MIN_CHUNK_SIZE) {
      throw new GatewayError(errors.invalidChunkSize());
    }
    this.previousChunkSize = size;
    this.chunkRemaining = size;
    this.chunkHash = this.options.signatures ? createHash('sha256') : null;
    if (size > 0) {
      this.state = 'data';
      return;
    }
    this.verifyChunk();
    this.state = 'trailer';
  }

  private takeData(data: Buffer): void {
    this.chunkRemaining -= data.length;
    this.chunkHash?.update(data);
    if (this.chunkRemaining > 0) return;
    this.verifyChunk();
    this.state = 'data-end';
  }

  private verifyChunk(): void {
    const { signatures } = this.options;
    if (signatures && !signatures.verifyChunk(this.chunkHash!.digest('hex'), this.chunkSignature)) {
      throw new GatewayError(errors.signatureDoesNotMatch());
    }
  }

  private addTrailerLine(line: string): void {
    if (line === '') {
      this.endTrailer();
      return;
    }
    this.trailerBytes += line.length + 2;
    const field = TRAILER_LINE.exec(line);
    if (this.trailerBytes > MAX_TRAILER_BYTES || !field || this.trailerSignature !== null) {
      throw new GatewayError(errors.malformedTrailer());
    }
    const name = field[1]!.toLowerCase();
    if (this.options.signedTrailer && name === TRAILER_SIGNATURE) {
      this.trailerSignature = field[2]!;
    } else {
      this.trailerLines.push(line);
      this.trailerFields.set(name, field[2]!);
    }
  }

  private endTrailer(): void {
    const { signatures, signedTrailer } = this.options;
    if (signatures && signedTrailer) {
      if (this.trailerSignature === null) throw new GatewayError(errors.malformedTrailer());
      const lines = this.trailerLines.map((line) => `${line}\n`).join('');
      if (!signatures.verifyTrailer(lines, this.trailerSignature)) {
        throw new GatewayError(errors.signatureDoesNotMatch());
      }
    }
    this.state = 'done';
  }
}
