import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../../src/index.ts';
import { fixturesOf } from '../../support/in-process.ts';
import type { FixturesView } from '../../support/instance.ts';

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

/**
 * The in-process instance a dashboard test file drives through app.request(): started once for the file with the
 * clock frozen, its fixtures read, reset (and the clock frozen again) before each test, stopped after the file.
 * Read `lp` and `fixtures` inside hooks and tests: they are set once the file's beforeAll has run.
 */
export function useFrozenDashboard() {
  let lp: InProcessLocalplane | undefined;
  let fixtures: FixturesView | undefined;
  beforeAll(async () => {
    lp = await createLocalplane({ log: () => {}, freezeClock: true });
    fixtures = await fixturesOf(lp);
  });
  afterAll(async () => {
    await lp?.stop();
  });
  beforeEach(async () => {
    await lp!.reset();
    lp!.clock.freeze();
  });
  return {
    get lp() {
      return lp!;
    },
    get fixtures() {
      return fixtures!;
    },
  };
}
