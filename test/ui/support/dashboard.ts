import { expect } from 'vitest';
import type { InProcessLocalplane } from '../../../src/index.ts';

/** The header htmx sends, which asks a view for the part that changes. */
export const HTMX = { 'hx-request': 'true' };

/** A dashboard form posted as a browser (or, with HTMX, htmx) posts it. */
export const postForm = (
  lp: InProcessLocalplane,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  lp.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });

/** A dashboard page (or fragment) that must answer 200, as text. */
export async function okPage(
  lp: InProcessLocalplane,
  path: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await lp.request(path, { headers });
  expect(response.status, path).toBe(200);
  return response.text();
}
