/**
 * What `localplane record` masks before an exchange reaches the file: the journal's secrets
 * (isSecretName in src/shared/secret-names.ts, src/journal/entries.ts), found in headers, queries
 * and bodies, each masking told to `report` by where it was (`request.headers.x-api-key`,
 * `response.content.credentials`).
 */
import {
  decodedComponent,
  decodeText,
  JSON_TYPE,
  maskedHeaderValue,
  maskSecretQueryValues,
  maskSigningDetails,
} from '../journal/entries.ts';
import { MASKED_SECRET_VALUE } from '../shared/errors.ts';
import { copyJson, jsonText } from '../shared/json-walk.ts';
import {
  isSecretName,
  KEPT_NAMES,
  maskSecretFields,
  SECRET_NAMES,
  SECRET_WORD_PAIRS,
  SECRET_WORDS,
} from '../shared/secret-names.ts';
import type { HarHeader } from './har.ts';

/** Hears each thing masked, by where it was in the entry. */
export type MaskReport = (where: string) => void;

/** What a recording's `_localplane.masking` says the masking covers. */
export const MASKING = {
  value: MASKED_SECRET_VALUE,
  names:
    'headers, query parameters and JSON fields, in any case, named with one of the words below (split at anything ' +
    'but ' +
    'a letter or digit and at case changes), two of its words in a row a pair below, or one of the names listed; ' +
    'but the kept names, whose values are kept whole',
  words: [...SECRET_WORDS],
  word_pairs: [...SECRET_WORD_PAIRS],
  listed_names: [...SECRET_NAMES],
  kept_names: [...KEPT_NAMES],
  authorization:
    'AWS4 (SigV4): its Signature, the credential scope and signed headers kept; any other scheme: the whole value',
  json: "each string and number under a secret name, at any depth, but a secret's name; the shape kept",
  text:
    'secret query parameters in any text and header (presigned URLs in JSON strings); S3 signing details; event ' +
    'streams ' +
    ('line by line, form bodies as queries; a body that does not parse and claims to be JSON, or names a secret ' +
      'JSON field, whole'),
};

const EVENT_STREAM_TYPE = /^text\/event-stream\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;
/**
 * A JSON field's name (`"credentials":`): text that is not JSON but names a secret field likely holds its value next to
 * it.
 */
const FIELD_NAME = /"([^"\\\n]*)"\s*:/g;

function namesSecretField(text: string): boolean {
  for (const [, name] of text.matchAll(FIELD_NAME)) if (isSecretName(name!)) return true;
  return false;
}

export function maskedHarHeaders(
  pairs: readonly (readonly [string, string])[],
  where: string,
  report: MaskReport,
): HarHeader[] {
  return pairs.map(([name, value]) => {
    const lower = name.toLowerCase();
    const masked = maskedHeaderValue(lower, value);
    if (masked !== value) report(`${where}.${lower}`);
    return { name, value: masked };
  });
}

/** A query without its `?` (or a form body) with the secret parameters' values masked, every other byte as sent. */
export function maskedQueryText(query: string, where: string, report: MaskReport): string {
  return query
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      if (equals === -1) return part;
      const name = decodedComponent(part.slice(0, equals));
      const value = part.slice(equals + 1);
      if (!isSecretName(name) || value === '' || value === MASKED_SECRET_VALUE) return part;
      report(`${where}.${name}`);
      return `${part.slice(0, equals)}=${MASKED_SECRET_VALUE}`;
    })
    .join('&');
}

/** A secret's name (a deployment's `secrets: [{name, value}]`) labels it and is kept. */
const SECRET_NAME_KEY = 'name';

/**
 * Each string and number of a secret field's value masked, at any depth, but a secret's name; `masked` hears the
 * field's name for each one.
 */
const maskedLeaves = (value: unknown, secretField: string, masked: (field: string) => void): unknown =>
  copyJson(value, (leaf, key) => {
    if (key === SECRET_NAME_KEY) return { value: leaf };
    if ((typeof leaf !== 'string' && typeof leaf !== 'number') || leaf === MASKED_SECRET_VALUE) return undefined;
    masked(secretField);
    return { value: MASKED_SECRET_VALUE };
  });

/**
 * A JSON value with each string and number under a secret name (isSecretName, at any depth)
 * masked and its shape kept: `credentials` stays an object of two strings, `secrets` a list of
 * objects, so that a recording's answers compare by shape and its requests can be replayed with
 * other secrets put in. `masked` hears the secret field's name for each value hidden.
 */
const maskedJson = (value: unknown, masked: (field: string) => void) =>
  maskSecretFields(value, (field, name) => maskedLeaves(field, name, masked));

function parsedJson(text: string): { value: unknown } | null {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

/**
 * Text that may be JSON: its secret fields' values masked, then secret query parameters in
 * its strings. A text that names a secret field, or claims to be JSON, and does not parse is
 * masked whole: a secret in it cannot be told from the rest.
 */
function maskedText(text: string, claimsJson: boolean, where: string, report: MaskReport): string {
  const json = parsedJson(text);
  if (json !== null) {
    let changed = false;
    const masked = maskedJson(json.value, (field) => {
      changed = true;
      report(`${where}.${field}`);
    });
    // Unchanged JSON keeps its bytes, as the client saw them; JSON.stringify would run out of stack on deep JSON.
    return maskSecretQueryValues(changed ? jsonText(masked)! : text, (parameter) => report(`${where}.${parameter}`));
  }
  if (claimsJson || namesSecretField(text)) {
    report(where);
    return MASKED_SECRET_VALUE;
  }
  const masked = maskSigningDetails(text);
  if (masked !== text) report(where);
  return masked;
}

/**
 * A body as the recording keeps it: UTF-8 text as text, masked; other bytes as base64, unless
 * they claim to be JSON (then masked whole). `whole` is false for the first part of a longer
 * body: JSON cut short does not parse, and is kept unless it names a secret field.
 */
export function maskedBody(
  bytes: Buffer,
  mimeType: string,
  whole: boolean,
  where: string,
  report: MaskReport,
): { text: string; encoding?: 'base64' } {
  const text = decodeText(bytes, null, whole);
  if (text === null) {
    if (!JSON_TYPE.test(mimeType)) return { text: bytes.toString('base64'), encoding: 'base64' };
    report(where);
    return { text: MASKED_SECRET_VALUE };
  }
  if (EVENT_STREAM_TYPE.test(mimeType)) {
    return {
      text: text.replace(
        /^(data: ?)(.*)$/gm,
        (_, field: string, data: string) => `${field}${maskedText(data, false, where, report)}`,
      ),
    };
  }
  if (FORM_TYPE.test(mimeType)) return { text: maskedQueryText(text, where, report) };
  return { text: maskedText(text, whole && JSON_TYPE.test(mimeType), where, report) };
}
