import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { printable, printableError } from './log-text.ts';

/** An error with the real service's body shape: `{"detail": "<message>"}`. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly detail: string,
    /** Sent with the answer, e.g. a 429's `retry-after`. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string) => new HttpError(400, detail);
export const notFound = (detail: string) => new HttpError(404, detail);
export const conflict = (detail: string) => new HttpError(409, detail);

/** One entry of a FastAPI 422 body. */
export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * Fields whose values are secret (`token`: a deployment's registry push token): a 422 never
 * echoes them, nor anything under them, whatever their type (a string sent where an object
 * belongs is masked too). The journal and recordings mask these and any other name that reads
 * as a secret (isSecretName in secret-names.ts).
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'credentials',
  'secrets',
  'secret_access_key',
  'session_token',
  'client_secret',
  'token',
]);
/** What a response shows instead of a secret value. */
export const MASKED_SECRET_VALUE = '********';

/** A copy of a request value with the value of every secret field masked, at any depth. */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      SECRET_FIELDS.has(key) ? MASKED_SECRET_VALUE : maskSecrets(field),
    ]),
  );
}

function withoutSecrets(detail: ValidationDetail): ValidationDetail {
  if (detail.input === undefined || detail.input === null) return detail;
  const isSecret = detail.loc.some((key) => typeof key === 'string' && SECRET_FIELDS.has(key));
  return { ...detail, input: isSecret ? MASKED_SECRET_VALUE : maskSecrets(detail.input) };
}

export class ValidationFailed extends Error {
  constructor(readonly details: ValidationDetail[]) {
    super('Request validation failed');
  }
}

export type RequestPart = 'body' | 'query' | 'path' | 'header';

/** Custom zod issues name their pydantic error type in `params.type`. */
export function customIssue(type: string, message: string) {
  return { code: 'custom' as const, message, params: { type } };
}

const PYDANTIC_TYPE_NAMES: Record<string, [type: string, msg: string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['model_attributes_type', 'Input should be a valid dictionary or object to extract fields from'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
};

function readInput(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function quoteList(values: readonly unknown[]): string {
  const quoted = values.map((value) => `'${String(value)}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/** Translates zod issues into pydantic v2 / FastAPI error entries. */
export function toValidationDetails(error: z.ZodError, part: RequestPart, input: unknown): ValidationDetail[] {
  return error.issues.map((issue) => {
    const loc = [part, ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))];
    const value = readInput(input, issue.path);
    const entry = (type: string, msg: string, ctx?: Record<string, unknown>): ValidationDetail => ({
      type,
      loc,
      msg,
      input: value,
      ...(ctx ? { ctx } : {}),
    });
    switch (issue.code) {
      case 'invalid_type': {
        if (value === undefined) return { type: 'missing', loc, msg: 'Field required', input: null };
        const [type, msg] = PYDANTIC_TYPE_NAMES[issue.expected] ?? ['value_error', issue.message];
        return entry(type, msg);
      }
      case 'invalid_value':
        return entry('enum', `Input should be ${quoteList(issue.values)}`, { expected: quoteList(issue.values) });
      case 'invalid_format':
        if (issue.format === 'uuid' || issue.format === 'guid')
          return entry('uuid_parsing', 'Input should be a valid UUID');
        if (issue.format === 'regex') {
          const pattern = (issue as { pattern?: string }).pattern ?? '';
          return entry('string_pattern_mismatch', `String should match pattern '${pattern}'`, { pattern });
        }
        return entry('value_error', issue.message);
      case 'too_small':
        if (issue.origin === 'string') {
          return entry(
            'string_too_short',
            `String should have at least ${issue.minimum} character${issue.minimum === 1 ? '' : 's'}`,
            { min_length: Number(issue.minimum) },
          );
        }
        if (issue.origin === 'array') {
          return entry('too_short', `List should have at least ${issue.minimum} items`, {
            min_length: Number(issue.minimum),
          });
        }
        if (issue.inclusive === false)
          return entry('greater_than', `Input should be greater than ${issue.minimum}`, { gt: Number(issue.minimum) });
        return entry('greater_than_equal', `Input should be greater than or equal to ${issue.minimum}`, {
          ge: Number(issue.minimum),
        });
      case 'too_big':
        if (issue.origin === 'string') {
          return entry('string_too_long', `String should have at most ${issue.maximum} characters`, {
            max_length: Number(issue.maximum),
          });
        }
        if (issue.origin === 'array') {
          return entry('too_long', `List should have at most ${issue.maximum} items`, {
            max_length: Number(issue.maximum),
          });
        }
        return entry('less_than_equal', `Input should be less than or equal to ${issue.maximum}`, {
          le: Number(issue.maximum),
        });
      case 'unrecognized_keys':
        return { type: 'extra_forbidden', loc: [...loc, issue.keys[0]!], msg: 'Extra inputs are not permitted' };
      case 'custom': {
        const type = (issue.params as { type?: string } | undefined)?.type ?? 'value_error';
        return entry(type, type === 'value_error' ? `Value error, ${issue.message}` : issue.message);
      }
      default:
        return entry('value_error', issue.message);
    }
  });
}

/**
 * A 413 leaves the rest of the body unread: its connection closes after the answer (lingering,
 * see lingering-close.ts) rather than read those bytes as the next request.
 */
const closesConnection = (status: number): Record<string, string> => (status === 413 ? { connection: 'close' } : {});

export function errorResponse(c: Context, error: unknown, log: (message: string) => void): Response {
  if (error instanceof HttpError)
    return c.json({ detail: error.detail }, error.status, { ...error.headers, ...closesConnection(error.status) });
  if (error instanceof ValidationFailed) return c.json({ detail: error.details.map(withoutSecrets) }, 422);
  log(`internal error on ${c.req.method} ${printable(c.req.path)}: ${printableError(error)}`);
  return c.json({ detail: 'Internal Server Error' }, 500);
}
