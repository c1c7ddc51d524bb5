import { badRequest } from '../shared/errors.ts';
import { errorsByStatus } from './errors.ts';
import type { ErrorResponse } from './declarations.ts';

/** What the served document says of the Prefer header on every endpoint. */
export const PREFER_DESCRIPTION =
  'Prism-style: `code=<status>` answers that documented error response (its first example) instead of running the ' +
  'request, ' +
  '`example=<name>` the documented example of that name; nothing changes. Authentication applies first.';

/**
 * The `code` and `example` preferences of a Prefer header (RFC 7240: others are ignored), as `code=429, example=name`.
 */
function preferences(header: string): { code?: string; example?: string } {
  const found: Record<string, string> = {};
  for (const part of header.split(/[,;]/)) {
    const [name = '', value = ''] = part.split('=', 2).map((text) => text.trim());
    if (name === 'code' || name === 'example') found[name] = value.replace(/^"(.*)"$/, '$1');
  }
  return found;
}

const listed = (values: readonly (string | number)[]) => (values.length > 0 ? values.join(', ') : 'none');

/**
 * The documented error response a request's Prefer header asks for, or null when it asks for
 * none; a code or example the endpoint does not document is a 400 that lists those it does.
 */
export function forcedResponse(
  header: string | undefined,
  errors: readonly ErrorResponse[],
): { status: number; body: unknown } | null {
  if (!header) return null;
  const { code, example } = preferences(header);
  if (code === undefined && example === undefined) return null;
  const documented = errorsByStatus(errors);
  let candidates = documented;
  if (code !== undefined) {
    candidates = documented.filter((error) => String(error.status) === code);
    if (candidates.length === 0) {
      throw badRequest(
        `Prefer code=${code} is not an error response of this endpoint; it ` +
          `documents: ${listed(documented.map((error) => error.status))}`,
      );
    }
  }
  if (example === undefined) {
    const [error] = candidates as [ErrorResponse];
    return { status: error.status, body: Object.values(error.examples)[0] };
  }
  const chosen = candidates.find((error) => Object.hasOwn(error.examples, example));
  if (!chosen) {
    const names = candidates.flatMap((error) => Object.keys(error.examples));
    throw badRequest(
      `Prefer example=${example} is not an error example of this endpoint${code ? ` for code ${code}` : ''}; it ` +
        `documents: ${listed(names)}`,
    );
  }
  return { status: chosen.status, body: chosen.examples[example] };
}
