import { MASKED_SECRET_VALUE, maskSecrets, SECRET_FIELDS } from '../shared/errors.ts';
import { textHead } from '../shared/text-head.ts';
import type { JournalBody } from './schemas.ts';

export const JOURNAL_BODY_CHARS = 8 * 1024;

/** SSE-C customer keys: the key that encrypts the object (or the copy's source), as a header or in a presigned URL's query. */
const CUSTOMER_KEYS = ['x-amz-server-side-encryption-customer-key', 'x-amz-copy-source-server-side-encryption-customer-key'];
/** Headers whose whole value is secret (a response's Set-Cookie too, for recordings). */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['x-api-key', 'proxy-authorization', 'cookie', 'set-cookie', 'x-amz-security-token', ...CUSTOMER_KEYS]);
/** Query parameters whose value is secret (presigned URLs), beside SECRET_FIELDS. */
export const SECRET_QUERY_PARAMETERS: ReadonlySet<string> = new Set(['x-amz-signature', 'x-amz-security-token', 'signature', 'api_key', ...CUSTOMER_KEYS]);

/** A SigV4 Authorization header keeps its credential scope and signed headers; any other scheme is masked whole. */
function maskAuthorization(value: string): string {
  return value.startsWith('AWS4-') ? value.replace(/Signature=[^,\s]*/g, `Signature=${MASKED_SECRET_VALUE}`) : MASKED_SECRET_VALUE;
}

/** A header's value as the journal shows it; `name` in lower case. */
export const maskedHeaderValue = (name: string, value: string) =>
  SECRET_HEADERS.has(name) ? MASKED_SECRET_VALUE : name === 'authorization' ? maskAuthorization(value) : value;

/** Header names in lower case, a repeated header's values joined by `, ` as Headers does, secrets masked. */
export function maskedHeaders(headers: Iterable<[string, string]>): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [rawName, rawValue] of headers) {
    const name = rawName.toLowerCase();
    const value = maskedHeaderValue(name, rawValue);
    masked[name] = Object.hasOwn(masked, name) ? `${masked[name]}, ${value}` : value;
  }
  return masked;
}

export const isSecretParameter = (name: string) => SECRET_QUERY_PARAMETERS.has(name.toLowerCase()) || SECRET_FIELDS.has(name);

/** Query parameters (repeated ones as lists) with presigned signatures and other secrets masked. */
export function maskedQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, rawValue] of new URLSearchParams(search)) {
    const value = isSecretParameter(name) ? MASKED_SECRET_VALUE : rawValue;
    const earlier = query[name];
    query[name] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  return query;
}

const TEXT_TYPE = /^(text\/|application\/(json|xml|x-www-form-urlencoded|problem\+json)\b|[^;]*\+(json|xml)\b)/i;
export const JSON_TYPE = /^application\/([^;]*\+)?json\b/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a body, null when binary (by its content type, if given, or its bytes). The first bytes of a longer body may end inside a character. */
export function decodeText(bytes: Uint8Array, contentType: string | null, whole: boolean): string | null {
  if (contentType !== null && !TEXT_TYPE.test(contentType)) return null;
  try {
    return utf8.decode(whole ? bytes : bytes.subarray(0, lastCharacterEnd(bytes)));
  } catch {
    return null;
  }
}

/** Where the last whole UTF-8 character of the bytes ends. */
function lastCharacterEnd(bytes: Uint8Array): number {
  let start = bytes.length - 1;
  while (start > 0 && start > bytes.length - 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  const lead = bytes[start] ?? 0;
  const length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return start + length <= bytes.length ? bytes.length : start;
}

/** JSON text masked; null when the text is not JSON (or nests too deep to walk). */
function maskedJson(text: string, mask: (value: unknown) => unknown): string | null {
  try {
    return JSON.stringify(mask(JSON.parse(text)));
  } catch {
    return null;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The fields of a sent value that its schema read (`accepted`, unknown fields dropped), with their values as sent. */
function knownFields(sent: unknown, accepted: unknown): unknown {
  if (Array.isArray(sent) && Array.isArray(accepted)) return sent.map((item, at) => knownFields(item, accepted[at]));
  if (isRecord(sent) && isRecord(accepted)) {
    return Object.fromEntries(Object.entries(sent).flatMap(([key, value]) => (Object.hasOwn(accepted, key) ? [[key, knownFields(value, accepted[key])]] : [])));
  }
  return sent;
}

/**
 * How a JSON body sent to an endpoint with secret fields shows: the fields the endpoint read,
 * secrets masked; masked whole when it was refused. A misspelled field (`"secret_acess_key"`)
 * may hold a secret that no field name tells.
 */
export const maskAsRead = (accepted: unknown) => (accepted === undefined ? null : (sent: unknown) => maskSecrets(knownFields(sent, accepted)));

export interface BodyCapture {
  /** The body's bytes, or its first bytes (`size` is then larger); null when not copied. */
  bytes: Uint8Array | null;
  size: number | null;
  contentType: string | null;
  /** What text that is not JSON shows. */
  maskText: (text: string) => string;
  /** What a JSON body shows (default: the value with SECRET_FIELDS masked); null to treat it as any text. */
  maskJson?: ((value: unknown) => unknown) | null;
}

/** For text that may hold a secret anywhere (a malformed body sent to an endpoint with secret fields). */
export const maskWhole = () => MASKED_SECRET_VALUE;

/** A signed header's line (`name:value`) in a canonical request, and a query parameter (`name=value`), of the secret ones. */
const SECRET_HEADER_LINE = new RegExp(`((?:${[...SECRET_HEADERS].join('|')}):)[^\\n<]*`, 'gi');
/** The value ends where a URL's query parameter, an XML text or a JSON string (a quote, an escape) does. */
const SECRET_QUERY_VALUE = new RegExp(`((?:${[...SECRET_QUERY_PARAMETERS].join('|')})=)[^&\\s<,"\\\\]*`, 'gi');

/** The secret query parameters' values (`x-amz-signature=...`) anywhere in a text: a presigned URL in a JSON string, say; `masked` hears each one's name. */
export function maskSecretQueryValues(text: string, masked?: (parameter: string) => void): string {
  return text.replace(SECRET_QUERY_VALUE, (found, assignment: string) => {
    const value = found.slice(assignment.length);
    if (value !== '' && value !== MASKED_SECRET_VALUE) masked?.(assignment.slice(0, -1).toLowerCase());
    return `${assignment}${MASKED_SECRET_VALUE}`;
  });
}

/**
 * S3 error documents of a SignatureDoesNotMatch quote the request as signed: its session token
 * and SSE-C keys (as text and as hex bytes), the signature, a presigned URL's query.
 */
export function maskSigningDetails(text: string): string {
  return maskSecretQueryValues(
    text
      .replace(/<(SignatureProvided|CanonicalRequestBytes|StringToSignBytes)>[^<]*<\/\1>/g, `<$1>${MASKED_SECRET_VALUE}</$1>`)
      .replace(SECRET_HEADER_LINE, `$1${MASKED_SECRET_VALUE}`),
  );
}

/**
 * A body as the journal keeps it: JSON with its secret fields masked, text bounded, binary as
 * size and type. It holds no reference to the body: only the first JOURNAL_BODY_CHARS characters.
 */
export function journalBody({ bytes, size, contentType, maskText, maskJson = maskSecrets }: BodyCapture): JournalBody {
  const summary = { text: null, size, content_type: contentType, truncated: false };
  if (bytes === null || bytes.byteLength === 0) return summary;
  const whole = size === null || bytes.byteLength >= size;
  const decoded = decodeText(bytes, contentType, whole);
  if (decoded === null) return summary;
  const json = maskJson !== null && whole && (contentType === null || JSON_TYPE.test(contentType)) ? maskedJson(decoded, maskJson) : null;
  const text = json ?? maskText(decoded);
  const truncated = !whole || text.length > JOURNAL_BODY_CHARS;
  return { text: textHead(text, JOURNAL_BODY_CHARS), size, content_type: contentType, truncated };
}
