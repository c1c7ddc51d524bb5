import type { Context } from 'hono';
import { z } from 'zod';
import { customIssue, ValidationFailed, toValidationDetails, type RequestPart } from './errors.ts';

function parse<S extends z.ZodType>(schema: S, part: RequestPart, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationFailed(toValidationDetails(result.error, part, input));
  return result.data;
}

/** Reads and validates a JSON body; malformed JSON is a 422 `json_invalid`, as in FastAPI. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let input: unknown;
  try {
    input = text === '' ? undefined : JSON.parse(text);
  } catch (error) {
    throw new ValidationFailed([
      {
        type: 'json_invalid',
        loc: ['body', 0],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: error instanceof Error ? error.message : String(error) },
      },
    ]);
  }
  if (input === undefined) {
    throw new ValidationFailed([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  }
  return parse(schema, 'body', input);
}

/**
 * Query parameters. Those named in `lists` arrive as arrays: each may be comma-separated,
 * sent several times, or both (`?ids=a,b&ids=c` is `["a", "b", "c"]`).
 */
export function queryParams<S extends z.ZodType>(c: Context, schema: S, lists: readonly string[] = []): z.output<S> {
  const input: Record<string, string | string[]> = c.req.query();
  for (const name of lists) {
    const values = c.req.queries(name);
    if (values) input[name] = values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '');
  }
  return parse(schema, 'query', input);
}

export function pathParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parse(schema, 'path', c.req.param());
}

/** A path or query uuid, 422 `uuid_parsing` when malformed. */
export const uuidString = z.guid();

const TRUE_WORDS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_WORDS = ['0', 'off', 'f', 'false', 'n', 'no'];

/** A boolean query parameter, read the way pydantic reads one (`true`/`false`, `1`/`0`, `yes`/`no` ...). */
export const queryBoolean = z.string().transform((text, ctx) => {
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  ctx.addIssue(customIssue('bool_parsing', 'Input should be a valid boolean, unable to interpret input'));
  return z.NEVER;
});

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
      filled[key] = given === undefined || given === null ? null : fillNested ? fillNested(given as Record<string, unknown>) : given;
    }
    return filled as z.output<S>;
  };
}
