import type { Context } from 'hono';
import { BODY_UNREADABLE } from '../shared/validation.ts';
import { DashboardApiError } from './api.ts';

/** A posted form's text fields (a repeated field gives its last value); a body that is no form is a 400, as the API words it. */
export async function readForm(c: Context): Promise<Record<string, string>> {
  let body: Record<string, unknown>;
  try {
    body = await c.req.parseBody();
  } catch {
    throw new DashboardApiError(400, BODY_UNREADABLE);
  }
  return Object.fromEntries(Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
