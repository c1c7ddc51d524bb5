/** Raw S3 requests signed by the SDK's own SigV4 signer, for what the SDK hides or will not send. */
import { SignatureV4 } from '@smithy/signature-v4';

import { NodeSha256, type Credentials } from './objstore-server.ts';

export interface SignedReply {
  status: number;
  headers: Headers;
  body: string;
}

const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/** `method /path?query` to the store at `endpoint`, signed with `key`; the path is sent as given. */
export async function signedRequest(
  endpoint: string,
  key: Credentials,
  method: string,
  path: string,
  options: { query?: Record<string, string>; headers?: Record<string, string>; body?: string } = {},
): Promise<SignedReply> {
  const url = new URL(endpoint);
  const query = options.query ?? {};
  const signer = new SignatureV4({
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    region: 'us-east-1',
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
  });
  const signed = await signer.sign({
    method,
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path,
    query,
    headers: { host: url.host, ...options.headers },
    body: options.body,
  });
  const search = Object.entries(query)
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .join('&');
  const response = await fetch(`${endpoint}${path}${search ? `?${search}` : ''}`, { method, headers: signed.headers, body: options.body });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

export const errorCodeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
