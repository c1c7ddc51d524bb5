/**
 * npm run screenshot:readme
 *
 * The README's picture of the dashboard, docs/images/dashboard.png: a fresh localplane on the
 * documented ports (seed 1, the clock frozen at CLOCK) that has run an export of a fixture
 * project to completion and answered a few requests, its overview at /ui in Chromium at
 * 1280x800 in the light theme. Rerun after changing the dashboard, and commit the picture; the
 * same dashboard gives the same picture but for the instance's uptime.
 */
import type { FixturesView } from '../src/admin/schemas.ts';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { start } from '../src/index.ts';
import { collectPageErrors, CONTEXT_DEFAULTS, launchChromium } from '../test/support/chromium.ts';

export const README_SCREENSHOT = fileURLToPath(new URL('../docs/images/dashboard.png', import.meta.url));
const CLOCK = '2026-10-05T09:00:00Z';
const PROJECT = 'research-agent';
const EXPORT_KEY = 'LPTESTFULLACCESS0001';

export interface CaptureOptions {
  /** The PNG to write. */
  file: string;
  /**
   * The API's and the objstore's ports (the overview shows the objstore's URL); default the documented 9400 and 9401.
   */
  port?: number;
  objstorePort?: number;
}

/**
 * Starts the instance, gives it its activity, saves the overview; returns what went wrong in the page (nothing,
 * normally).
 */
export async function captureDashboard({
  file,
  port = 9400,
  objstorePort = 9401,
}: CaptureOptions): Promise<{ pageErrors: string[] }> {
  const lp = await start({ port, objstorePort, seed: 1, freezeClock: true, log: () => {} });
  try {
    await lp.clock.set(CLOCK);
    await addActivity(lp.apiUrl);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage(CONTEXT_DEFAULTS);
      const pageErrors: string[] = [];
      collectPageErrors(page, pageErrors);
      const response = await page.goto(`${lp.apiUrl}/ui`, { waitUntil: 'networkidle' });
      if (!response?.ok()) throw new Error(`GET ${lp.apiUrl}/ui answered ${response?.status()}`);
      mkdirSync(dirname(file), { recursive: true });
      await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
      return { pageErrors };
    } finally {
      await browser.close();
    }
  } finally {
    await lp.stop();
  }
}

/** A destination, an export of a fixture project run to completion on the clock, some reads, a 404 and a 422. */
async function addActivity(apiUrl: string) {
  const call = async (method: string, path: string, apiKey?: string, body?: unknown) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  /** The answer's body, as the shape `T` the caller expects of it (not checked). */
  const expectStatus = async <T>(expected: number, reply: Promise<{ status: number; body: unknown }>) => {
    const { status, body } = await reply;
    if (status !== expected) throw new Error(`expected ${expected}, got ${status}: ${JSON.stringify(body)}`);
    return body as T;
  };

  const fixtures = await expectStatus<FixturesView>(200, call('GET', '/_localplane/fixtures'));
  const workspace = fixtures.workspaces.find(({ sessions }) => sessions.some(({ name }) => name === PROJECT))!;
  const key = fixtures.objstore.keys.find(({ access_key_id }) => access_key_id === EXPORT_KEY)!;
  const destination = await expectStatus<{ id: string }>(
    200,
    call('POST', '/api/v1/bulk-exports/destinations', workspace.api_key, {
      display_name: 'warehouse',
      config: { bucket_name: 'exports', prefix: 'warehouse' },
      credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
    }),
  );
  const created = await expectStatus<{ id: string }>(
    200,
    call('POST', '/api/v1/bulk-exports', workspace.api_key, {
      bulk_export_destination_id: destination.id,
      session_id: workspace.sessions.find(({ name }) => name === PROJECT)!.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-04T00:00:00Z',
      format_version: 'v2_beta',
      compression: 'snappy',
    }),
  );
  await expectStatus(200, call('POST', '/_localplane/clock/advance', undefined, { seconds: 60 }));
  const ended = await expectStatus<{ status: string }>(
    200,
    call('GET', `/api/v1/bulk-exports/${created.id}`, workspace.api_key),
  );
  if (ended.status !== 'Completed') throw new Error(`the export ended ${ended.status}`);

  for (const { api_key } of fixtures.workspaces)
    await expectStatus(200, call('GET', '/v2/deployments?limit=10', api_key));
  await expectStatus(200, call('GET', `/v2/deployments/${workspace.deployments[0]!.id}`, workspace.api_key));
  await expectStatus(404, call('GET', '/v2/deployments/00000000-0000-4000-8000-000000000000', workspace.api_key));
  await expectStatus(422, call('POST', '/api/v1/bulk-exports', workspace.api_key, { start_time: 'yesterday' }));
}

async function main() {
  const { pageErrors } = await captureDashboard({ file: README_SCREENSHOT });
  if (pageErrors.length > 0) throw new Error(`the page went wrong:\n${pageErrors.join('\n')}`);
  console.log(`wrote ${README_SCREENSHOT}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
