/**
 * SigV4 arithmetic on @smithy/signature-v4, the signer of the AWS SDK itself: the signature of
 * a request as received, and the chain of chunk signatures of an aws-chunked body.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

import {
  ALGORITHM_IDENTIFIER,
  createScope,
  getCanonicalHeaders,
  getSigningKey,
  SignatureV4,
} from '@smithy/signature-v4';
import type { AwsCredentialIdentity, HeaderBag, HttpRequest, QueryParameterBag } from '@smithy/types';
import { NodeSha256 } from '../../../shared/node-sha256.ts';

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const EMPTY_SHA256 = sha256Hex('');

/**
 * The signatures of an aws-chunked body (`x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD`
 * or `...-PAYLOAD-TRAILER`): each chunk's `chunk-signature` chains from the request's seed
 * signature, and a signed trailer ends the chain. Whoever decodes the body calls these in order.
 */
export interface ChunkSignatures {
  /**
   * Checks the next chunk's signature, given the hex SHA-256 of its data (hashed as it streams:
   * a chunk may be gigabytes), and advances the chain; false when it does not match.
   */
  verifyChunk(chunkSha256: string, chunkSignature: string): boolean;
  /** Checks `x-amz-trailer-signature` over the trailer lines (`name:value\n` each); false when it does not match. */
  verifyTrailer(trailerLines: string, trailerSignature: string): boolean;
}

export interface SigningScope {
  region: string;
  service: string;
}

/** A request as the signature covers it. */
export interface SignableRequest {
  method: string;
  /** The canonical URI. */
  path: string;
  query: QueryParameterBag;
  /** The signed headers, with their values as received. */
  headers: HeaderBag;
  payloadHash: string;
  time: Date;
  scope: SigningScope;
}

export interface RequestSignature {
  canonicalRequest: string;
  stringToSign: string;
  signature: string;
}

/** yyyyMMdd'T'HHmmss'Z', the time format of SigV4. */
export function longDate(time: Date): string {
  return time
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

function scopeOf(time: Date, scope: SigningScope): string {
  return createScope(longDate(time).slice(0, 8), scope.region, scope.service);
}

/** The signer, opened up to hand back the canonical request and string to sign it signed. */
class ReceivedRequestSigner extends SignatureV4 {
  constructor(credentials: AwsCredentialIdentity) {
    // S3 signs the URI path once encoded, not encoded again (`uriEscapePath: false`), and
    // takes the payload hash from x-amz-content-sha256 (`applyChecksum: false`).
    super({
      credentials,
      region: 'us-east-1',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  async signReceived(request: SignableRequest): Promise<RequestSignature> {
    const httpRequest: HttpRequest = {
      method: request.method,
      protocol: 'http:',
      hostname: '',
      path: request.path,
      query: request.query,
      headers: request.headers,
    };
    // Every header the client listed is canonical, also those the SDK never signs itself.
    const canonicalHeaders = getCanonicalHeaders(httpRequest, undefined, new Set(Object.keys(request.headers)));
    const canonicalRequest = this.createCanonicalRequest(httpRequest, canonicalHeaders, request.payloadHash);
    const stringToSign = await this.createStringToSign(
      longDate(request.time),
      scopeOf(request.time, request.scope),
      canonicalRequest,
      ALGORITHM_IDENTIFIER,
    );
    const signature = await this.sign(stringToSign, {
      signingDate: request.time,
      signingRegion: request.scope.region,
      signingService: request.scope.service,
    });
    return { canonicalRequest, stringToSign, signature };
  }
}

/** The signature a request as received should carry when signed with these credentials. */
export function calculateSignature(
  credentials: AwsCredentialIdentity,
  request: SignableRequest,
): Promise<RequestSignature> {
  return new ReceivedRequestSigner(credentials).signReceived(request);
}

/** Constant-time comparison of hex signatures (S3 accepts either letter case). */
export function signaturesMatch(provided: string, expected: string): boolean {
  const providedBytes = Buffer.from(provided.toLowerCase());
  const expectedBytes = Buffer.from(expected);
  return providedBytes.length === expectedBytes.length && timingSafeEqual(providedBytes, expectedBytes);
}

/**
 * The chunk signatures of an aws-chunked body (AWS "Transferring Payload in Multiple Chunks"):
 * each chunk's string to sign names the previous signature, starting from the request's seed
 * signature, and the trailer is signed after the empty last chunk. The chain breaks for good at
 * the first signature that does not match.
 */
export async function chunkSignatureChain(
  credentials: AwsCredentialIdentity,
  time: Date,
  scope: SigningScope,
  seedSignature: string,
): Promise<ChunkSignatures> {
  const date = longDate(time);
  const scopeText = scopeOf(time, scope);
  const signingKey = await getSigningKey(NodeSha256, credentials, date.slice(0, 8), scope.region, scope.service);
  let previous: string | null = seedSignature;

  const advance = (algorithm: string, hashes: string[], provided: string): boolean => {
    if (previous === null) return false;
    const stringToSign = [algorithm, date, scopeText, previous, ...hashes].join('\n');
    const expected = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
    previous = signaturesMatch(provided, expected) ? expected : null;
    return previous !== null;
  };

  return {
    verifyChunk: (chunkSha256, chunkSignature) =>
      advance('AWS4-HMAC-SHA256-PAYLOAD', [EMPTY_SHA256, chunkSha256], chunkSignature),
    verifyTrailer: (trailerLines, trailerSignature) =>
      advance('AWS4-HMAC-SHA256-TRAILER', [sha256Hex(trailerLines)], trailerSignature),
  };
}

/** The signature of a browser form upload (POST object): the base64 policy signed with the scope's signing key. */
export async function policySignature(
  credentials: AwsCredentialIdentity,
  scopeDate: string,
  scope: SigningScope,
  policy: string,
): Promise<string> {
  const signingKey = await getSigningKey(NodeSha256, credentials, scopeDate, scope.region, scope.service);
  return createHmac('sha256', signingKey).update(policy).digest('hex');
}
