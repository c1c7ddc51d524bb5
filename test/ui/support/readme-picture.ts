/**
 * The README's picture of the dashboard, docs/images/dashboard.png, is the overview browser test's screenshot of one
 * scene: a fresh instance (seed 1, the clock frozen at README_CLOCK) that has run an export of a fixture project to
 * completion and answered a few requests, its overview at 1280 px wide in the light theme. `npm run screenshot:readme`
 * runs that test alone with UPDATE_README_PICTURE set, and the test copies its screenshot over the picture; otherwise
 * the test checks that the committed picture has its screenshot's size. Nothing else captures the dashboard for the
 * README.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from '../../support/instance.ts';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export const README_PICTURE = join(REPO_ROOT, 'docs', 'images', 'dashboard.png');
/** The test that takes the picture, by the file and the name `vitest run <file> -t <name>` selects it with. */
export const README_TEST_FILE = 'test/ui/overview-browser.test.ts';
export const README_TEST_NAME = 'the overview of a seeded instance that has run an export, on a frozen clock';
/** The test's screenshot, test-results/screenshots/<README_SCREENSHOT>.png. */
export const README_SCREENSHOT = 'overview-readme';
/** The environment variable that has the test copy its screenshot over the README's picture. */
export const UPDATE_README_PICTURE = 'UPDATE_README_PICTURE';
export const README_SEED = 1;
export const README_CLOCK = '2026-10-05T09:00:00Z';
const PROJECT = 'research-agent';
const EXPORT_KEY = 'LPTESTFULLACCESS0001';

/**
 * The scene's activity on an instance started with README_SEED and a frozen clock: the clock at README_CLOCK, a
 * destination, an export of a fixture project run to completion on the clock, some reads, a 404 and a 422. Returns the
 * export's id.
 */
export async function addReadmeActivity({ api, admin, fixtures }: TestContext): Promise<string> {
  const expectStatus = async <T>(expected: number, reply: Promise<{ status: number; body: T }>) => {
    const { status, body } = await reply;
    if (status !== expected) throw new Error(`expected ${expected}, got ${status}: ${JSON.stringify(body)}`);
    return body;
  };
  await expectStatus(200, admin.request('POST', '/clock/set', { body: { time: README_CLOCK } }));
  const workspace = fixtures.workspaces.find(({ sessions }) => sessions.some(({ name }) => name === PROJECT))!;
  const key = fixtures.objstore.keys.find(({ access_key_id }) => access_key_id === EXPORT_KEY)!;
  const headers = { 'x-api-key': workspace.api_key };
  const destination = await expectStatus(
    200,
    api.request<{ id: string }>('POST', '/api/v1/bulk-exports/destinations', {
      headers,
      body: {
        display_name: 'warehouse',
        config: { bucket_name: 'exports', prefix: 'warehouse' },
        credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
      },
    }),
  );
  const created = await expectStatus(
    200,
    api.request<{ id: string }>('POST', '/api/v1/bulk-exports', {
      headers,
      body: {
        bulk_export_destination_id: destination.id,
        session_id: workspace.sessions.find(({ name }) => name === PROJECT)!.id,
        start_time: '2026-10-01T00:00:00Z',
        end_time: '2026-10-04T00:00:00Z',
        format_version: 'v2_beta',
        compression: 'snappy',
      },
    }),
  );
  await expectStatus(200, admin.request('POST', '/clock/advance', { body: { seconds: 60 } }));
  const ended = await expectStatus(
    200,
    api.request<{ status: string }>('GET', `/api/v1/bulk-exports/${created.id}`, { headers }),
  );
  if (ended.status !== 'Completed') throw new Error(`the export ended ${ended.status}`);

  for (const { api_key } of fixtures.workspaces)
    await expectStatus(200, api.request('GET', '/v2/deployments?limit=10', { headers: { 'x-api-key': api_key } }));
  await expectStatus(200, api.request('GET', `/v2/deployments/${workspace.deployments[0]!.id}`, { headers }));
  await expectStatus(404, api.request('GET', '/v2/deployments/00000000-0000-4000-8000-000000000000', { headers }));
  await expectStatus(422, api.request('POST', '/api/v1/bulk-exports', { headers, body: { start_time: 'yesterday' } }));
  return created.id;
}
