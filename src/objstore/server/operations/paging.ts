/**
 * What the gateway's own listings (ListObjects, ListObjectsV2, ListMultipartUploads, ListParts)
 * share: S3's key order, paging with a delimiter and a marker, `encoding-type=url`, and query
 * parameters parsed the way S3 parses them.
 */
import { errors, GatewayError, type S3ErrorSpec } from '../../s3-errors.ts';
import { singleParam, type ParsedQuery } from '../target.ts';

/** Moves UTF-16 surrogates (U+D800–U+DFFF) above U+E000–U+FFFF, where their code points sort. */
function codePointRank(codeUnit: number): number {
  if (codeUnit < 0xd800) return codeUnit;
  return codeUnit < 0xe000 ? codeUnit + 0x2000 : codeUnit - 0x800;
}

/** S3 lists keys in UTF-8 binary order, which is code point order, not JavaScript's UTF-16 order. */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** `key` up to and including the first `delimiter` after `prefix`; null when it has none. */
function commonPrefixOf(key: string, prefix: string, delimiter: string): string | null {
  if (delimiter === '') return null;
  const at = key.indexOf(delimiter, prefix.length);
  return at === -1 ? null : key.slice(0, at + delimiter.length);
}

/** One result of a listing page; `name` is what a marker or continuation token resumes after. */
export type ListEntry<T> = { kind: 'item'; name: string; item: T } | { kind: 'commonPrefix'; name: string };

export interface PageOptions {
  prefix: string;
  /** '' for none. */
  delimiter: string;
  /** The name the previous page ended on (a key or a common prefix); '' for the first page. */
  marker: string;
  /** Items whose key equals the marker are after it (the caller already cut the list there). */
  includeMarkerKey?: boolean;
  limit: number;
}

export interface Page<T> {
  entries: ListEntry<T>[];
  isTruncated: boolean;
}

/**
 * One page of `items` (sorted by key): keys under the prefix, those holding the delimiter after
 * the prefix rolled up into common prefixes, each entry counting once against the limit.
 *
 * Only entries named after the marker are listed, so a marker inside a common prefix skips the
 * whole prefix (as S3 does) and paging a delimited listing never repeats one. A page of none is
 * complete, as S3 answers `max-keys=0`.
 */
export function pageOf<T>(items: Iterable<T>, keyOf: (item: T) => string, options: PageOptions): Page<T> {
  const { prefix, delimiter, marker, includeMarkerKey = false, limit } = options;
  const entries: ListEntry<T>[] = [];
  if (limit === 0) return { entries, isTruncated: false };
  let lastCommonPrefix: string | null = null;
  for (const item of items) {
    const key = keyOf(item);
    if (!key.startsWith(prefix)) continue;
    const commonPrefix = commonPrefixOf(key, prefix, delimiter);
    const name = commonPrefix ?? key;
    const order = compareKeys(name, marker);
    const afterMarker = order > 0 || (order === 0 && includeMarkerKey && commonPrefix === null);
    if (!afterMarker || (commonPrefix !== null && commonPrefix === lastCommonPrefix)) continue;
    if (entries.length === limit) return { entries, isTruncated: true };
    if (commonPrefix === null) {
      entries.push({ kind: 'item', name, item });
    } else {
      entries.push({ kind: 'commonPrefix', name });
      lastCommonPrefix = commonPrefix;
    }
  }
  return { entries, isTruncated: false };
}

/** The items of a page, without its common prefixes. */
export function itemsOf<T>(page: Page<T>): T[] {
  return page.entries.flatMap((entry) => (entry.kind === 'item' ? [entry.item] : []));
}

/** The common prefixes of a page. */
export function commonPrefixesOf<T>(page: Page<T>): string[] {
  return page.entries.flatMap((entry) => (entry.kind === 'commonPrefix' ? [entry.name] : []));
}

/**
 * A name as S3 writes it under `encoding-type=url`: UTF-8 percent-encoded in upper case, except
 * letters, digits, `-_.*` and `/` (so a space is `%20`, `+` is `%2B` and `~` is `%7E`).
 */
export function encodeUrlStyle(value: string): string {
  return encodeURIComponent(value)
    .replace(/%2F/g, '/')
    .replace(/[!'()~]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The `prefix` and `delimiter` of a listing, '' when absent. */
export function parsePrefixAndDelimiter(query: ParsedQuery): { prefix: string; delimiter: string } {
  return { prefix: singleParam(query, 'prefix') ?? '', delimiter: singleParam(query, 'delimiter') ?? '' };
}

/** How a listing writes names: URL-encoded under `encoding-type=url`, else as they are. */
export type NameEncoder = (name: string) => string;

/**
 * The `encoding-type` parameter, echoed as sent: absent, or `url` in any case; S3 refuses
 * anything else.
 */
export function parseEncodingType(query: ParsedQuery): { encodingType: string | undefined; encode: NameEncoder } {
  const encodingType = singleParam(query, 'encoding-type');
  if (encodingType === undefined) return { encodingType, encode: (name) => name };
  if (encodingType.toLowerCase() !== 'url') {
    throw new GatewayError(errors.invalidEncodingType());
  }
  return { encodingType, encode: encodeUrlStyle };
}

const INT32_MAX = 2147483647;

/**
 * An integer query parameter, parsed as S3 parses `max-keys`: absent or empty is `fallback`;
 * leading zeros are allowed; anything that is not an int32 is refused here, while a negative
 * value is left to `requireNonNegative` (S3 judges the range later, after the bucket lookup).
 */
export function parseIntegerParam(query: ParsedQuery, name: string, fallback: number): number {
  const raw = singleParam(query, name);
  if (raw === undefined || raw === '') return fallback;
  const match = /^(-?)0*(\d{1,10})$/.exec(raw);
  const value = match ? Number(`${match[1]}${match[2]}`) : NaN;
  if (!(value >= -INT32_MAX - 1 && value <= INT32_MAX)) {
    throw new GatewayError(errors.notAnInteger(name));
  }
  return value;
}

/** `argumentName` is how S3 names the parameter in this message (`maxKeys` for `max-keys`). */
export function requireNonNegative(value: number, argumentName: string): void {
  if (value < 0) {
    throw new GatewayError(errors.negativeArgument(argumentName));
  }
}

/** S3 refuses a parameter that belongs to the other version of a listing, with `error`. */
export function refuseParam(query: ParsedQuery, name: string, error: S3ErrorSpec): void {
  if (singleParam(query, name) !== undefined) throw new GatewayError(error);
}
