import type { Context } from 'hono';
import { z } from 'zod';
import { ValidationFailed, toValidationDetails, type RequestPart } from './errors.ts';

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

export function queryParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parse(schema, 'query', c.req.query());
}

export function pathParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parse(schema, 'path', c.req.param());
}

/** A path or query uuid, 422 `uuid_parsing` when malformed. */
export const uuidString = z.guid();
