import { MASKED_SECRET_VALUE } from '../shared/errors.ts';
import { jsonText } from '../shared/json-walk.ts';
import { isSecretName, maskSecretFields, SECRET_NAMES } from '../shared/secret-names.ts';
import { textHead } from '../shared/text-head.ts';
import type { JournalBody } from './schemas.ts';

export const JOURNAL_BODY_CHARS = 8 * 1024;

/** A SigV4 Authorization header keeps its credential scope and signed headers; any other scheme is masked whole. */
function maskAuthorization(value: string): string {
  return value.startsWith('AWS4-')
    ? value.replace(/Signature=[^,\s]*/g, `Signature=${MASKED_SECRET_VALUE}`)
    : MASKED_SECRET_VALUE;
}

/**
 * A header's value as the journal shows it (`name` in lower case): whole when its name is secret, else its secret query
 * parameters.
 */
export const maskedHeaderValue = (name: string, value: string) =>
  name === 'authorization'
    ? maskAuthorization(value)
    : isSecretName(name)
      ? MASKED_SECRET_VALUE
      : maskSecretQueryValues(value);

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

/** Query parameters (repeated ones as lists) with presigned signatures and other secrets masked. */
export function maskedQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, rawValue] of new URLSearchParams(search)) {
    const value = isSecretName(name) ? MASKED_SECRET_VALUE : rawValue;
    const earlier = query[name];
    query[name] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  return query;
}

/** A query parameter's name or value as sent, percent-decoded (`+` a space); as sent when it does not decode. */
export function decodedComponent(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

/**
 * A listed secret name at the end of a longer one (`xsignature=`): the texts were searched for these before the rule.
 */
const LISTED_NAME_AT_END = new RegExp(`(?:${[...SECRET_NAMES].join('|')})$`, 'i');
/** A name found in a text (`name=` or `name:`) as sent: secret by its words, decoded, or ending in a listed name. */
const isSecretInText = (name: string) => isSecretName(decodedComponent(name)) || LISTED_NAME_AT_END.test(name);

const TEXT_TYPE = /^(text\/|application\/(json|xml|x-www-form-urlencoded|problem\+json)\b|[^;]*\+(json|xml)\b)/i;
export const JSON_TYPE = /^application\/([^;]*\+)?json\b/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of a body, null when binary (by its content type, if given, or its bytes). The first bytes of a longer body
 * may end inside a character.
 */
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

/**
 * JSON text masked, at any depth (jsonText, not JSON.stringify, which runs out of stack on deep JSON); null when the
 * text is not JSON.
 */
function maskedJson(text: string, mask: (value: unknown) => unknown): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return jsonText(mask(value)) ?? null;
}

/** A JSON value with the value of every secret name (isSecretName) masked whole, at any depth. */
const maskSecretValues = (value: unknown) => maskSecretFields(value, () => MASKED_SECRET_VALUE);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The fields of a sent value that its schema read (`accepted`, unknown fields dropped), with their values as sent. */
function knownFields(sent: unknown, accepted: unknown): unknown {
  if (Array.isArray(sent) && Array.isArray(accepted)) return sent.map((item, at) => knownFields(item, accepted[at]));
  if (isRecord(sent) && isRecord(accepted)) {
    return Object.fromEntries(
      Object.entries(sent).flatMap(([key, value]) =>
        Object.hasOwn(accepted, key) ? [[key, knownFields(value, accepted[key])]] : [],
      ),
    );
  }
  return sent;
}

/**
 * How a JSON body sent to an endpoint with secret fields shows: the fields the endpoint read,
 * secrets masked; masked whole when it was refused. A misspelled field (`"secret_acess_key"`)
 * may hold a secret that no field name tells.
 */
export const maskAsRead = (accepted: unknown) =>
  accepted === undefined ? null : (sent: unknown) => maskSecretValues(knownFields(sent, accepted));

export interface BodyCapture {
  /** The body's bytes, or its first bytes (`size` is then larger); null when not copied. */
  bytes: Uint8Array | null;
  size: number | null;
  contentType: string | null;
  /** What text that is not JSON shows. */
  maskText: (text: string) => string;
  /** What a JSON body shows (default: the value under each secret name masked); null to treat it as any text. */
  maskJson?: ((value: unknown) => unknown) | null;
}

/** For text that may hold a secret anywhere (a malformed body sent to an endpoint with secret fields). */
export const maskWhole = () => MASKED_SECRET_VALUE;

/**
 * A query parameter's name (`name=`) in any text. A name starts where a run of its characters
 * does: trying each place inside a long run would take a time the square of its length.
 */
const QUERY_NAME = /(?<![\w.~%-])([\w.~%-]+)=/g;
/** Its value ends where a URL's parameter, an XML text or a JSON string (a quote, an escape) does. */
const QUERY_VALUE = /[^&\s<,"\\]*/y;
/** A header's name and value (`name:value`), as a canonical request's lines quote them. */
const HEADER_NAME = /(?<![\w.-])([\w.-]+):/g;
const HEADER_VALUE = /[^\n<]*/y;

/**
 * The text with the value after each secret name that `names` finds (its first group) masked,
 * up to where `value` ends; `masked` hears each name whose value was not empty. Only a secret's
 * value is passed over: a URL in another parameter's value (`next=https://h/?access_token=...`)
 * is searched too.
 */
function maskNamedValues(text: string, names: RegExp, value: RegExp, masked?: (name: string) => void): string {
  let result = '';
  let kept = 0;
  for (const found of text.matchAll(names)) {
    const name = found[1]!;
    if (found.index < kept || !isSecretInText(name)) continue;
    const start = found.index + found[0].length;
    value.lastIndex = start;
    const secret = value.exec(text)![0];
    if (secret !== '' && secret !== MASKED_SECRET_VALUE) masked?.(name.toLowerCase());
    result += `${text.slice(kept, start)}${MASKED_SECRET_VALUE}`;
    kept = start + secret.length;
  }
  return kept === 0 ? text : result + text.slice(kept);
}

/**
 * The values of query parameters with secret names (`X-Amz-Signature=...`) anywhere in a text:
 * a presigned URL in a JSON string, say; `masked` hears each one's name.
 */
export const maskSecretQueryValues = (text: string, masked?: (parameter: string) => void) =>
  maskNamedValues(text, QUERY_NAME, QUERY_VALUE, masked);

/**
 * S3 error documents of a SignatureDoesNotMatch quote the request as signed: its session token
 * and SSE-C keys (as text and as hex bytes), the signature, a presigned URL's query.
 */
export function maskSigningDetails(text: string): string {
  const signed = text.replace(
    /<(SignatureProvided|CanonicalRequestBytes|StringToSignBytes)>[^<]*<\/\1>/g,
    `<$1>${MASKED_SECRET_VALUE}</$1>`,
  );
  return maskSecretQueryValues(maskNamedValues(signed, HEADER_NAME, HEADER_VALUE));
}

/**
 * A body as the journal keeps it: JSON with its secret names' values masked, text bounded, binary as
 * size and type. It holds no reference to the body: only the first JOURNAL_BODY_CHARS characters.
 */
export function journalBody({
  bytes,
  size,
  contentType,
  maskText,
  maskJson = maskSecretValues,
}: BodyCapture): JournalBody {
  const summary = { text: null, size, content_type: contentType, truncated: false };
  if (bytes === null || bytes.byteLength === 0) return summary;
  const whole = size === null || bytes.byteLength >= size;
  const decoded = decodeText(bytes, contentType, whole);
  if (decoded === null) return summary;
  const json =
    maskJson !== null && whole && (contentType === null || JSON_TYPE.test(contentType))
      ? maskedJson(decoded, maskJson)
      : null;
  const text = json ?? maskText(decoded);
  const truncated = !whole || text.length > JOURNAL_BODY_CHARS;
  return { text: textHead(text, JOURNAL_BODY_CHARS), size, content_type: contentType, truncated };
}
