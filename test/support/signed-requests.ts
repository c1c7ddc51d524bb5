/**
 * Raw S3 requests signed as real clients sign them (@smithy/signature-v4, the AWS SDK's own
 * signer), for the cases the SDK cannot produce: exact header values, unusual Range and
 * conditional headers, raw UTF-8 metadata bytes, tampered presigned URLs.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

import { SignatureV4 } from '@smithy/signature-v4';

import { NodeSha256, rawRequest, type Credentials, type RawResponse } from './objstore-server.ts';

export interface SignedRequest {
  method: string;
  /** Percent-encoded path, sent and signed as is. */
  path: string;
  query?: Record<string, string>;
  /** Signed, and sent as UTF-8 bytes (as clients send non-ASCII metadata). */
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** When the request was signed (default: now). */
  signingDate?: Date;
}

const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function signer(credentials: Credentials): SignatureV4 {
  return new SignatureV4({ credentials, region: 'us-east-1', service: 's3', sha256: NodeSha256, uriEscapePath: false });
}

function searchOf(query: Record<string, string>): string {
  const search = new URLSearchParams(query).toString().replace(/\+/g, '%20');
  return search === '' ? '' : `?${search}`;
}

/** Node writes header text as Latin-1, one byte a character: hand it the UTF-8 bytes that way. */
const asUtf8Bytes = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Buffer.from(value, 'utf8').toString('latin1')]),
  );

/**
 * The headers of a request signed in its Authorization header (the body's SHA-256 as its payload hash), ready to send.
 */
export async function signedHeaders(
  url: string,
  credentials: Credentials,
  request: SignedRequest,
): Promise<Record<string, string>> {
  const { host, hostname, port } = new URL(url);
  const signed = await signer(credentials).sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname,
      port: Number(port),
      path: request.path,
      query: request.query ?? {},
      headers: { host, 'x-amz-content-sha256': sha256Hex(request.body ?? ''), ...request.headers },
    },
    { signingDate: request.signingDate ?? new Date() },
  );
  return asUtf8Bytes(signed.headers);
}

/** The path and query of a request as sent. */
export const targetOf = (request: Pick<SignedRequest, 'path' | 'query'>) =>
  `${request.path}${searchOf(request.query ?? {})}`;

/** Sends a request signed in its Authorization header, its body in one piece with its length. */
export async function sendSigned(
  url: string,
  credentials: Credentials,
  request: SignedRequest,
  agent: http.Agent | false = false,
): Promise<RawResponse> {
  const headers = await signedHeaders(url, credentials, request);
  // As bytes: Node writes the headers together with a first string chunk in the chunk's encoding.
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  if (body !== undefined) headers['content-length'] = String(body.length);
  return rawRequest(url, request.method, targetOf(request), headers, body, agent);
}

/**
 * Sends requests as `sendSigned` does, over at most `connections` kept-alive connections: the
 * cheapest way to make thousands of small requests (an upload's parts) in a test.
 */
export function keepAliveSender(
  url: string,
  credentials: Credentials,
  connections: number,
): { send(request: SignedRequest): Promise<RawResponse>; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  return { send: (request) => sendSigned(url, credentials, request, agent), close: () => agent.destroy() };
}

/**
 * A presigned URL's path and query, signed for `expiresIn` seconds from `signingDate` as the SDK's S3 presigner signs
 * it.
 */
export async function presignedPath(
  url: string,
  credentials: Credentials,
  request: Pick<SignedRequest, 'method' | 'path' | 'query' | 'signingDate'> & { expiresIn: number },
): Promise<string> {
  const { host, hostname, port } = new URL(url);
  const presigned = await signer(credentials).presign(
    {
      method: request.method,
      protocol: 'http:',
      hostname,
      port: Number(port),
      path: request.path,
      query: { ...request.query },
      headers: { host, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' },
    },
    { expiresIn: request.expiresIn, signingDate: request.signingDate ?? new Date() },
  );
  return `${request.path}${searchOf(presigned.query as Record<string, string>)}`;
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as they are, over one
 * connection.
 */
export function sendExactly(url: string, head: string, body = ''): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), text });
    });
  });
}

/** The text of the first `<name>` element of an XML document. */
export function xmlElement(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}
