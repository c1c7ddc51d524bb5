import type { IncomingHttpHeaders } from 'node:http';

import { errors, GatewayError } from '../../s3-errors.ts';
import type { ParsedQuery } from '../target.ts';

/** Where a request's credentials came from. */
export type AuthMechanism =
  | 'sigv4-header' // Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...
  | 'sigv4-query' // presigned URL: X-Amz-Algorithm, X-Amz-Credential, ...
  | 'sigv2-header' // Authorization: AWS <id>:<signature>
  | 'sigv2-query'; // presigned URL: AWSAccessKeyId, Signature, Expires

export interface CredentialScope {
  date: string;
  region: string;
  service: string;
  /** `aws4_request` in a well-formed scope; checked with the signature. */
  terminator: string;
}

/**
 * The claimed identity of a request and the material needed to verify it. Nothing here is
 * secret (the signature is derived from the secret, not the secret itself), but it is still
 * never journalled or logged apart from the access key id.
 */
export interface RequestCredential {
  mechanism: AuthMechanism;
  accessKeyId: string;
  signature: string;
  /** SigV4 only. */
  scope?: CredentialScope;
  /** SigV4 only, lower-case header names as listed by the client. */
  signedHeaders?: readonly string[];
  /** SigV4 query: X-Amz-Date and X-Amz-Expires; SigV2 query: Expires. */
  date?: string;
  expires?: string;
}

const V4_ALGORITHM = 'AWS4-HMAC-SHA256';

export function parseV4Credential(credential: string): { accessKeyId: string; scope: CredentialScope } | null {
  const parts = credential.split('/');
  if (parts.length !== 5) return null;
  const [accessKeyId, date, region, service, terminator] = parts as [string, string, string, string, string];
  if (accessKeyId === '' || date === '' || region === '' || service === '' || terminator === '') return null;
  return { accessKeyId, scope: { date, region, service, terminator } };
}

function parseAuthorizationHeader(value: string): RequestCredential {
  const trimmed = value.trim();
  const space = trimmed.indexOf(' ');
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  const rest = space === -1 ? '' : trimmed.slice(space + 1).trim();

  if (scheme === V4_ALGORITHM) {
    const components = new Map<string, string>();
    for (const component of rest.split(',')) {
      const text = component.trim();
      if (text === '') continue;
      const equals = text.indexOf('=');
      if (equals === -1) {
        throw new GatewayError(errors.malformedAuthorizationComponent(text));
      }
      components.set(text.slice(0, equals).trim(), text.slice(equals + 1).trim());
    }
    for (const name of ['Credential', 'SignedHeaders', 'Signature']) {
      if (!components.get(name)) {
        throw new GatewayError(errors.missingAuthorizationComponent(name));
      }
    }
    const parsed = parseV4Credential(components.get('Credential')!);
    if (!parsed) throw new GatewayError(errors.malformedHeaderCredential());
    return {
      mechanism: 'sigv4-header',
      accessKeyId: parsed.accessKeyId,
      scope: parsed.scope,
      signedHeaders: components
        .get('SignedHeaders')!
        .split(';')
        .map((h) => h.trim().toLowerCase()),
      signature: components.get('Signature')!,
    };
  }

  if (scheme === 'AWS') {
    const colon = rest.lastIndexOf(':');
    if (colon <= 0 || colon === rest.length - 1) {
      throw new GatewayError(errors.malformedSigV2Header());
    }
    return { mechanism: 'sigv2-header', accessKeyId: rest.slice(0, colon), signature: rest.slice(colon + 1) };
  }

  throw new GatewayError(errors.unsupportedAuthorizationType());
}

/** Case-insensitive lookup of an X-Amz-* query parameter; repeated parameters are malformed. */
export function amzQueryParam(query: ParsedQuery, name: string): string | undefined {
  const lower = name.toLowerCase();
  let found: string | undefined;
  for (const [key, value] of Object.entries(query)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    if (Array.isArray(value) || found !== undefined) {
      throw new GatewayError(errors.repeatedAuthQueryParameter(name));
    }
    found = value;
  }
  return found;
}

function parseQueryV4(query: ParsedQuery): RequestCredential {
  const algorithm = amzQueryParam(query, 'X-Amz-Algorithm');
  const credential = amzQueryParam(query, 'X-Amz-Credential');
  const signature = amzQueryParam(query, 'X-Amz-Signature');
  const date = amzQueryParam(query, 'X-Amz-Date');
  const signedHeaders = amzQueryParam(query, 'X-Amz-SignedHeaders');
  const expires = amzQueryParam(query, 'X-Amz-Expires');
  if (!algorithm || !credential || !signature || !date || !signedHeaders || !expires) {
    throw new GatewayError(errors.missingV4QueryParameters());
  }
  if (algorithm !== V4_ALGORITHM) {
    throw new GatewayError(errors.unsupportedQueryAlgorithm());
  }
  const parsed = parseV4Credential(credential);
  if (!parsed) {
    throw new GatewayError(errors.malformedQueryCredential());
  }
  return {
    mechanism: 'sigv4-query',
    accessKeyId: parsed.accessKeyId,
    scope: parsed.scope,
    signedHeaders: signedHeaders.split(';').map((h) => h.trim().toLowerCase()),
    signature,
    date,
    expires,
  };
}

function parseQueryV2(query: ParsedQuery): RequestCredential {
  const { AWSAccessKeyId: accessKeyId, Signature: signature, Expires: expires } = query;
  if (typeof accessKeyId !== 'string' || typeof signature !== 'string' || typeof expires !== 'string' || !accessKeyId) {
    throw new GatewayError(errors.missingSigV2QueryParameters());
  }
  return { mechanism: 'sigv2-query', accessKeyId, signature, expires };
}

function hasAmzQueryParam(query: ParsedQuery, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(query).some((key) => key.toLowerCase() === lower);
}

/**
 * Finds who a request claims to be. Returns null for an anonymous (unsigned) request and
 * throws a GatewayError for malformed or conflicting authentication.
 */
export function extractCredential(headers: IncomingHttpHeaders, query: ParsedQuery): RequestCredential | null {
  const header = headers.authorization;
  const mechanisms = {
    header: header !== undefined,
    queryV4: ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature'].some((name) => hasAmzQueryParam(query, name)),
    queryV2: 'Signature' in query || 'AWSAccessKeyId' in query,
  };
  const count = Object.values(mechanisms).filter(Boolean).length;
  if (count === 0) return null;
  if (count > 1) throw new GatewayError(errors.multipleAuthMechanisms());
  if (mechanisms.header) return parseAuthorizationHeader(header ?? '');
  if (mechanisms.queryV4) return parseQueryV4(query);
  return parseQueryV2(query);
}
