/**
 * Which names mark a secret value: one rule for JSON keys (at any depth), query parameters and
 * headers, that the request journal and recordings share. A name is secret when one of its
 * words is a secret word, two of its words in a row are a secret pair, or it is one of the
 * names listed before the rule was; but for the hosted service's fields that read as secrets
 * and hold none (KEPT_NAMES).
 */
import { SECRET_FIELDS } from './errors.ts';
import { copyJson } from './json-walk.ts';

/** Single words that make a name secret: `access_token`, `X-Custom-Token`, `clientSecret`; not `total_tokens`. */
export const SECRET_WORDS: ReadonlySet<string> = new Set([
  'password',
  'passwd',
  'secret',
  'token',
  'apikey',
  'credential',
  'credentials',
  'authorization',
  'signature',
  'cookie',
]);

/**
 * Two words in a row that make a name secret (`private_key`), where one of them alone does not (`access_key_id`,
 * `api_version`).
 */
export const SECRET_WORD_PAIRS: ReadonlySet<string> = new Set(['api key', 'private key', 'session token']);

/**
 * SSE-C customer keys: the key that encrypts an object (or a copy's source), as a header or a presigned URL's
 * parameter.
 */
const CUSTOMER_KEYS = [
  'x-amz-server-side-encryption-customer-key',
  'x-amz-copy-source-server-side-encryption-customer-key',
];

/**
 * Names secret whatever their words (`secrets`, the SSE-C customer keys), in lower case: the list the rule came after.
 */
export const SECRET_NAMES: ReadonlySet<string> = new Set([
  ...SECRET_FIELDS,
  'x-api-key',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-amz-security-token',
  'x-amz-signature',
  'signature',
  'api_key',
  ...CUSTOMER_KEYS,
]);

/**
 * The hosted service's fields that the rule would mask and that hold no secret, kept whole: an
 * OAuth provider's `token_url` and `token_endpoint_auth_method`, a deployment's
 * `secret_references` (each names a Kubernetes secret and a key of it: `secret_name`,
 * `secret_key`), a destination's `credentials_keys` (the names of its credentials). Recordings
 * made into fixtures need them as the service answered them.
 */
export const KEPT_NAMES: ReadonlySet<string> = new Set([
  'token_url',
  'token_endpoint_auth_method',
  'secret_references',
  'credentials_keys',
]);

/**
 * Where a name splits into words: anything but a letter or digit (`-`, `_`, `.`, a space), a
 * lower case letter or digit before a capital (`clientSecret`), and an acronym's last capital
 * before a word (`APIKey`).
 */
const WORD_BREAK = /[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;

const SECOND_WORDS = [...SECRET_WORD_PAIRS].map((pair) => pair.split(' ')[1]!);
/**
 * Any of the words, a pair's second word or a listed name, in any case: a name that holds none is no secret, and is not
 * split.
 */
const MAY_BE_SECRET = new RegExp([...SECRET_WORDS, ...SECOND_WORDS, ...SECRET_NAMES].join('|'), 'i');

/** Whether a value named so is secret, in any case: see the module's comment. */
export function isSecretName(name: string): boolean {
  if (!MAY_BE_SECRET.test(name) || KEPT_NAMES.has(name)) return false;
  if (SECRET_NAMES.has(name.toLowerCase())) return true;
  const words = name.split(WORD_BREAK).map((word) => word.toLowerCase());
  return words.some(
    (word, at) => SECRET_WORDS.has(word) || (at > 0 && SECRET_WORD_PAIRS.has(`${words[at - 1]} ${word}`)),
  );
}

/**
 * A copy of a JSON value with the value of each secret name, at any depth (however deep: no
 * recursion), replaced by what `masked` makes of it; the value of a kept name is kept whole,
 * whatever names it holds.
 */
export const maskSecretFields = (value: unknown, masked: (field: unknown, name: string) => unknown): unknown =>
  copyJson(value, (field, key) =>
    key === null
      ? undefined
      : KEPT_NAMES.has(key)
        ? { value: field }
        : isSecretName(key)
          ? { value: masked(field, key) }
          : undefined,
  );
