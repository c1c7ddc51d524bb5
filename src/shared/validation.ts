import type { Context } from 'hono';
import { z } from 'zod';
import {
  badRequest,
  customIssue,
  HttpError,
  MASKED_SECRET_VALUE,
  SECRET_FIELDS,
  toValidationDetails,
  ValidationFailed,
  type RequestPart,
  type ValidationDetail,
} from './errors.ts';
import { findJsonSyntaxError } from './json-text.ts';
import { parseTimestamp } from './time.ts';

function parse<S extends z.ZodType>(schema: S, part: RequestPart, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationFailed(toValidationDetails(result.error, part, input));
  return result.data;
}

/** Request bodies larger than this are refused with 413 before they are read. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** FastAPI's 400 for a body that cannot be read, or is not UTF-8. */
export const BODY_UNREADABLE = 'There was an error parsing the body';
export const BODY_TOO_LARGE = `Request body too large: the limit is ${MAX_REQUEST_BODY_BYTES} bytes (1 MiB)`;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const tooLarge = () => new HttpError(413, BODY_TOO_LARGE);

/**
 * The body's bytes, refused past MAX_REQUEST_BODY_BYTES: by its Content-Length, or counted
 * as it streams in. A body that cannot be read (the client went away) is FastAPI's 400.
 */
async function readBody(c: Context): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > MAX_REQUEST_BODY_BYTES) throw tooLarge();
  try {
    if (declared !== undefined) return new Uint8Array(await c.req.arrayBuffer());
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of c.req.raw.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_REQUEST_BODY_BYTES) throw tooLarge();
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw badRequest(BODY_UNREADABLE);
  }
}

/** FastAPI reads a body as JSON without a content type, or with `application/json` or `application/*+json`. */
function isJsonContentType(header: string | undefined): boolean {
  if (!header) return true;
  const [main, subtype = ''] = header.split(';', 1)[0]!.trim().toLowerCase().split('/');
  return main === 'application' && (subtype === 'json' || subtype.endsWith('+json'));
}

/** Whether a JSON Schema declares a property with a secret name anywhere. */
function declaresSecret(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  const { properties } = node as { properties?: object };
  if (properties && Object.keys(properties).some((name) => SECRET_FIELDS.has(name))) return true;
  return Object.values(node).some(declaresSecret);
}

const bodyHasSecrets = new WeakMap<z.ZodType, boolean>();

/** Whether a body schema has a secret field anywhere (so that its raw text is never echoed). */
function carriesSecrets(schema: z.ZodType): boolean {
  let answer = bodyHasSecrets.get(schema);
  if (answer === undefined) {
    answer = declaresSecret(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
    bodyHasSecrets.set(schema, answer);
  }
  return answer;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** 422 entries for strings (and keys) holding a lone surrogate, which no store could keep as sent. */
function loneSurrogates(root: unknown): ValidationDetail[] {
  const found: ValidationDetail[] = [];
  const pending: { value: unknown; loc: (string | number)[] }[] = [{ value: root, loc: ['body'] }];
  for (let next = 0; next < pending.length; next++) {
    const { value, loc } = pending[next]!;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value))
        found.push({
          type: 'string_unicode',
          loc,
          msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
          input: value,
        });
    } else if (Array.isArray(value)) {
      value.forEach((element, index) => pending.push({ value: element, loc: [...loc, index] }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, field] of Object.entries(value)) {
        pending.push({ value: LONE_SURROGATE.test(key) ? key : field, loc: [...loc, key] });
      }
    }
  }
  return found;
}

/**
 * The body jsonBody read of a request, whether its schema has secret fields, and what it made of it: for the request
 * journal.
 */
export interface BodyRead {
  bytes: Uint8Array;
  carriesSecrets: boolean;
  /** The validated value (unknown fields dropped); undefined when the body was refused. */
  accepted?: unknown;
}

const bodiesRead = new WeakMap<Request, BodyRead>();

export const bodyReadOf = (request: Request): BodyRead | undefined => bodiesRead.get(request);

/**
 * Reads and validates a JSON body as FastAPI does: an empty body is `missing`, another
 * content type is `model_attributes_type` with the raw text as input, bytes that are not
 * UTF-8 are 400, malformed JSON is `json_invalid` (Python's message and position).
 * Beyond FastAPI, and before anything is parsed: over MAX_REQUEST_BODY_BYTES is 413,
 * nesting deeper than MAX_JSON_DEPTH is `json_invalid`; lone surrogates are `string_unicode`.
 */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const read = await readRecordedBody(c, schema);
  if (read.bytes.byteLength === 0) {
    throw new ValidationFailed([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  }
  return parseJsonBody(c, schema, read);
}

/**
 * A body the endpoint may do without (FastAPI's `body: Model | None = None`): undefined when empty, else as jsonBody.
 */
export async function optionalJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S> | undefined> {
  const read = await readRecordedBody(c, schema);
  return read.bytes.byteLength === 0 ? undefined : parseJsonBody(c, schema, read);
}

async function readRecordedBody(c: Context, schema: z.ZodType): Promise<BodyRead> {
  const read: BodyRead = { bytes: await readBody(c), carriesSecrets: carriesSecrets(schema) };
  bodiesRead.set(c.req.raw, read);
  return read;
}

function parseJsonBody<S extends z.ZodType>(c: Context, schema: S, read: BodyRead): z.output<S> {
  const { bytes } = read;
  if (!isJsonContentType(c.req.header('content-type'))) {
    const input = carriesSecrets(schema) ? MASKED_SECRET_VALUE : new TextDecoder().decode(bytes);
    throw new ValidationFailed([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input,
      },
    ]);
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest(BODY_UNREADABLE);
  }
  const syntaxError = findJsonSyntaxError(text);
  if (syntaxError) {
    throw new ValidationFailed([
      {
        type: 'json_invalid',
        loc: ['body', syntaxError.position],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: syntaxError.message },
      },
    ]);
  }
  const input: unknown = JSON.parse(text);
  const unicodeErrors = loneSurrogates(input);
  if (unicodeErrors.length > 0) throw new ValidationFailed(unicodeErrors);
  const accepted = parse(schema, 'body', input);
  read.accepted = accepted;
  return accepted;
}

/**
 * Query parameters. Those named in `lists` arrive as arrays: each may be comma-separated,
 * sent several times, or both (`?ids=a,b&ids=c` is `["a", "b", "c"]`).
 */
export function queryParams<S extends z.ZodType>(c: Context, schema: S, lists: readonly string[] = []): z.output<S> {
  const input: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    // A parameter sent twice takes its last value, as Starlette reads it.
    input[name] = lists.includes(name)
      ? values
          .flatMap((value) => value.split(','))
          .map((value) => value.trim())
          .filter((value) => value !== '')
      : values.at(-1)!;
  }
  return parse(schema, 'query', input);
}

export function pathParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parse(schema, 'path', c.req.param());
}

/** An ISO 8601 date-time in a request, read as microseconds (naive times are UTC). */
export const requestTimestamp = z
  .string()
  .transform((text, ctx) => {
    const micros = parseTimestamp(text);
    if (micros === null) {
      ctx.addIssue(customIssue('datetime_parsing', 'Input should be a valid datetime'));
      return z.NEVER;
    }
    return micros;
  })
  .meta({ format: 'date-time' });

const INTEGER_TEXT = /^\s*([+-]?\d+)(?:\.0*)?\s*$/;

/**
 * An integer query parameter, read the way pydantic reads one from text (`5`, ` +5 `, `5.00`):
 * other text is 422 `int_parsing`, a value out of bounds `greater_than_equal` / `less_than_equal`
 * (at most 2^53 - 1 without a bound: what a JavaScript number holds exactly).
 */
export function queryInteger({ min, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number }) {
  return (
    z
      .string()
      .transform((text, ctx) => {
        const digits = INTEGER_TEXT.exec(text)?.[1];
        if (digits === undefined) {
          ctx.addIssue(
            customIssue('int_parsing', 'Input should be a valid integer, unable to parse string as an integer'),
          );
          return z.NEVER;
        }
        const value = Number(digits);
        if (min !== undefined && value < min)
          ctx.addIssue({ code: 'too_small', origin: 'number', minimum: min, inclusive: true, input: text });
        if (value > max)
          ctx.addIssue({ code: 'too_big', origin: 'number', maximum: max, inclusive: true, input: text });
        return value;
      })
      // What the OpenAPI document shows of the parameter: the integer it is read as.
      .meta({ type: 'integer', ...(min === undefined ? {} : { minimum: min }), maximum: max })
  );
}

const TRUE_WORDS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_WORDS = ['0', 'off', 'f', 'false', 'n', 'no'];

/** A boolean query parameter, read the way pydantic reads one (`true`/`false`, `1`/`0`, `yes`/`no` ...). */
export const queryBoolean = z
  .string()
  .transform((text, ctx) => {
    const word = text.trim().toLowerCase();
    if (TRUE_WORDS.includes(word)) return true;
    if (FALSE_WORDS.includes(word)) return false;
    ctx.addIssue(customIssue('bool_parsing', 'Input should be a valid boolean, unable to interpret input'));
    return z.NEVER;
  })
  .meta({ type: 'boolean' });

/** The object schema inside default / nullable / optional wrappers, if the field holds one. */
function objectSchemaOf(field: z.ZodType): z.ZodObject | null {
  if (field instanceof z.ZodObject) return field;
  if (field instanceof z.ZodDefault || field instanceof z.ZodNullable || field instanceof z.ZodOptional) {
    return objectSchemaOf(field.unwrap() as z.ZodType);
  }
  return null;
}

/**
 * Gives stored data every field of an object schema, null where it has none (nested objects
 * likewise), as parsing with null defaults would, without validating again what was
 * validated when it was written: responses built from stored rows stay cheap.
 */
export function nullFiller<S extends z.ZodObject>(schema: S): (value: Record<string, unknown>) => z.output<S> {
  const fields = Object.entries(schema.shape).map(([key, field]) => {
    const nested = objectSchemaOf(field as z.ZodType);
    return [key, nested ? nullFiller(nested) : null] as const;
  });
  return (value) => {
    const filled: Record<string, unknown> = {};
    for (const [key, fillNested] of fields) {
      const given = value[key];
      filled[key] =
        given === undefined || given === null
          ? null
          : fillNested
            ? fillNested(given as Record<string, unknown>)
            : given;
    }
    return filled as z.output<S>;
  };
}
