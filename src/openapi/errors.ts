import type { z } from 'zod';
import { BODY_TOO_LARGE, BODY_UNREADABLE } from '../shared/validation.ts';
import type { ErrorResponse, ResponseHeader, RouteDeclaration } from './declarations.ts';

/** The id that error examples name. */
export const EXAMPLE_ID = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';

/** An error answered as `{"detail": "<message>"}`, with its named examples (and the headers it may carry). */
export function httpError(
  status: number,
  description: string,
  examples: Record<string, string>,
  headers?: Record<string, ResponseHeader>,
): ErrorResponse {
  return {
    status,
    description,
    examples: Object.fromEntries(Object.entries(examples).map(([name, detail]) => [name, { detail }])),
    ...(headers ? { headers } : {}),
  };
}

export const notFoundError = (what: string, detail: string) =>
  httpError(404, `${what} not found`, { not_found: detail });

function firstField(schema: z.ZodType | undefined): string | undefined {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape)[0] : undefined;
}

/** A 422 body of the kind the first declared part of the request would give. */
function validationExample(declaration: RouteDeclaration): unknown {
  if (declaration.body) return { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] };
  const pathField = firstField(declaration.params);
  if (pathField)
    return {
      detail: [
        { type: 'uuid_parsing', loc: ['path', pathField], msg: 'Input should be a valid UUID', input: 'not-a-uuid' },
      ],
    };
  return {
    detail: [
      { type: 'missing', loc: ['query', firstField(declaration.query) ?? 'query'], msg: 'Field required', input: null },
    ],
  };
}

/** The errors that reading a route's declared parts can give (see src/shared/validation.ts). */
export function requestErrors(declaration: RouteDeclaration): ErrorResponse[] {
  const errors: ErrorResponse[] = [];
  if (declaration.body) {
    errors.push(httpError(400, 'The body cannot be read, or is not UTF-8', { body_unreadable: BODY_UNREADABLE }));
    errors.push(httpError(413, 'The body is over 1 MiB', { body_too_large: BODY_TOO_LARGE }));
  }
  if (declaration.body || declaration.params || declaration.query) {
    errors.push({
      status: 422,
      description: 'Validation Error',
      examples: { validation_error: validationExample(declaration) },
    });
  }
  return errors;
}

/**
 * Errors by status, in status order: the descriptions joined, the examples (and headers) of each in declaration order.
 */
export function errorsByStatus(errors: readonly ErrorResponse[]): ErrorResponse[] {
  const merged = new Map<number, ErrorResponse>();
  for (const error of errors) {
    const known = merged.get(error.status);
    const headers = known?.headers || error.headers ? { headers: { ...known?.headers, ...error.headers } } : {};
    merged.set(
      error.status,
      known
        ? {
            status: error.status,
            description: `${known.description}; ${error.description}`,
            examples: { ...known.examples, ...error.examples },
            ...headers,
          }
        : error,
    );
  }
  return [...merged.values()].sort((a, b) => a.status - b.status);
}
