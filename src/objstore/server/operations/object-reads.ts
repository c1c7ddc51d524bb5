/**
 * GetObject and HeadObject, answered by the gateway from the storage as S3 answers them:
 * conditional headers (preconditions.ts), one byte range (ranges.ts), the stored headers with
 * user metadata encoded as S3 encodes it, `response-*` overrides, and the stored checksum when
 * asked for.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

import type { ObjectHead, ObjstoreStorage } from '../../storage/storage.ts';
import { answersStoredChecksum, pickChecksumHeaders } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import type { ParsedQuery } from '../target.ts';
import type { OperationContext } from './context.ts';
import { evaluateReadConditions, type ObjectState } from './preconditions.ts';
import { contentRange, readRangeRequest } from './ranges.ts';
import { userMetadataHeaderValue } from './user-metadata.ts';

/** An object as stored: its state for conditions, its size, and what HeadObject shows of it. */
export interface StoredObject {
  state: ObjectState;
  size: number;
  head: ObjectHead;
}

/** The object under `key`, or null when there is none. */
export async function readStoredObject(
  storage: ObjstoreStorage,
  bucket: string,
  key: string,
): Promise<StoredObject | null> {
  const head = await storage.headObject(bucket, key);
  if (head === null) return null;
  return {
    state: { etag: String(head['etag']), lastModified: new Date(String(head['last-modified'])) },
    size: Number(head['content-length']),
    head,
  };
}

/** The `response-*` query parameters S3 lets a signed GetObject / HeadObject override headers with. */
const RESPONSE_OVERRIDES: Readonly<Record<string, string>> = {
  'response-cache-control': 'Cache-Control',
  'response-content-disposition': 'Content-Disposition',
  'response-content-encoding': 'Content-Encoding',
  'response-content-language': 'Content-Language',
  'response-content-type': 'Content-Type',
  'response-expires': 'Expires',
};

function responseOverrides(query: ParsedQuery, authenticated: boolean): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!name.startsWith('response-') || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : value;
    const header = RESPONSE_OVERRIDES[name];
    if (header === undefined) {
      throw new GatewayError(errors.notOverridableHeader(name, text));
    }
    overrides[header] = text;
  }
  if (Object.keys(overrides).length > 0 && !authenticated) {
    throw new GatewayError(errors.anonymousResponseOverrides());
  }
  return overrides;
}

/** A header's name as S3 spells it: `ETag`, `Content-Type`, and `x-amz-*` in lower case. */
function spelledAsS3(name: string): string {
  if (name === 'etag') return 'ETag';
  if (name.startsWith('x-amz-')) return name;
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** The headers of the object as stored, user metadata as S3 answers it. */
function storedHeaders(
  ctx: OperationContext,
  stored: StoredObject,
  request: IncomingHttpHeaders,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(
    ctx.storage.storedMetadata(ctx.target.bucket!, ctx.target.key!, stored.head),
  )) {
    if (name === 'content-length') continue;
    headers[spelledAsS3(name)] = name.startsWith('x-amz-meta-') ? userMetadataHeaderValue(value) : value;
  }
  if (answersStoredChecksum(request)) Object.assign(headers, pickChecksumHeaders(stored.head));
  return headers;
}

function answerNotModified(ctx: OperationContext, state: ObjectState): void {
  const { res } = ctx.exchange;
  res.statusCode = 304;
  res.setHeader('ETag', state.etag);
  res.setHeader('Last-Modified', state.lastModified.toUTCString());
  res.end();
}

/** Resolves once the response takes more data, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Sends the object's bytes (those it was read for), the last piece with `end()`: the observer sees the exchange
 * when the response is ended, which must happen before the client can have read the whole body.
 */
async function sendContent(ctx: OperationContext, read: () => AsyncIterable<Buffer>): Promise<void> {
  const { res, method } = ctx.exchange;
  if (method === 'HEAD') {
    res.end();
    return;
  }
  let pending: Buffer | null = null;
  for await (const piece of read()) {
    if (pending !== null && !res.write(pending)) await drained(res);
    if (res.destroyed) return;
    pending = piece;
  }
  res.end(pending ?? undefined);
}

/** GetObject and HeadObject in a bucket that exists. */
export async function readObject(ctx: OperationContext): Promise<void> {
  const { bucket, key, query } = ctx.target;
  const { req, res } = ctx.exchange;
  const overrides = responseOverrides(query, ctx.exchange.authenticated);
  const stored = await readStoredObject(ctx.storage, bucket!, key!);
  if (stored === null) throw new GatewayError(errors.noSuchKey(key!));

  const verdict = evaluateReadConditions(req.headers, stored.state, ctx.now());
  if (verdict.kind === 'failed') throw new GatewayError(errors.preconditionFailed(verdict.condition));
  if (verdict.kind === 'not-modified') return answerNotModified(ctx, stored.state);

  const requested = readRangeRequest(req.headers.range, stored.size);
  if (requested.kind === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${stored.size}`);
    throw new GatewayError(errors.invalidRange(req.headers.range!, stored.size));
  }
  const range = requested.kind === 'range' ? requested.range : null;

  for (const [name, value] of Object.entries(storedHeaders(ctx, stored, req.headers))) res.setHeader(name, value);
  res.setHeader('Accept-Ranges', 'bytes');
  for (const [name, value] of Object.entries(overrides)) res.setHeader(name, value);
  // An object opened in a browser is inert: stored HTML never runs as a page of this origin, and nothing is sniffed
  // into one.
  res.setHeader('Content-Security-Policy', 'sandbox');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (range === null) {
    res.statusCode = 200;
    res.setHeader('Content-Length', stored.size);
  } else {
    res.statusCode = 206;
    res.setHeader('Content-Range', contentRange(range, stored.size));
    res.setHeader('Content-Length', range.end - range.start + 1);
  }
  await sendContent(ctx, () => ctx.storage.readObject(bucket!, key!, range));
}
