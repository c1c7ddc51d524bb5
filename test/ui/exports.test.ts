/**
 * The Exports view as app.request() sees it: a workspace's destinations and exports, the forms
 * creating them, an export's page following its runs to the end on the emulator clock, with
 * their errors, retries and files, the export-run knobs, cancelling.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import type { FixturesView, FixtureWorkspace } from '../support/instance.ts';
import { HTMX, okPage, postForm } from './support/dashboard.ts';

let lp: InProcessLocalplane;
let fixtures: FixturesView;
let acme: FixtureWorkspace;
let initech: FixtureWorkspace;
const logs: string[] = [];

beforeAll(async () => {
  lp = await createLocalplane({ freezeClock: true, log: (line) => logs.push(line) });
  fixtures = await fixturesOf(lp);
  acme = fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
  initech = fixtures.workspaces.find((workspace) => workspace.tier === 'developer')!;
});

afterAll(async () => {
  await lp?.stop();
});

beforeEach(async () => {
  await lp.reset();
});

const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(lp, path, fields, headers);
const page = (path: string, headers: Record<string, string> = {}) => okPage(lp, path, headers);

const advance = (seconds: number) => inProcessApi(lp).post('/_localplane/clock/advance', { seconds });
const acmeApi = () => inProcessApi(lp, acme);
const staging = () => acme.sessions.find((session) => session.name === 'support-bot-staging')!.id;

/** The destination form as a person fills it: a fixture key pair, its secret left blank. */
async function createDestinationFromForm(): Promise<string> {
  const response = await post(`/ui/exports/destinations?workspace_id=${acme.id}`, {
    display_name: 'ui destination',
    bucket_name: fixtures.objstore.buckets[0]!,
    prefix: 'from-the-ui',
    endpoint_url: '',
    access_key_id: fixtures.objstore.keys[0]!.access_key_id,
    secret_access_key: '',
  });
  expect(response.status, await response.clone().text()).toBe(303);
  expect(response.headers.get('location')).toBe(`/ui/exports?workspace_id=${acme.id}`);
  const destinations = (await acmeApi().get('/api/v1/bulk-exports/destinations')).body as {
    id: string;
    display_name: string;
  }[];
  return destinations.find((destination) => destination.display_name === 'ui destination')!.id;
}

const exportFields = (destinationId: string, overrides: Record<string, string> = {}) => ({
  bulk_export_destination_id: destinationId,
  session_id: staging(),
  start_time: '2026-10-01T00:00',
  end_time: '2026-10-03T00:00',
  interval_hours: '',
  filter: '',
  format_version: 'v2_beta',
  compression: 'snappy',
  export_fields: '',
  ...overrides,
});

/** Creates an export from the form as htmx sends it; answers its page's URL. */
async function createExportFromForm(destinationId: string, overrides: Record<string, string> = {}): Promise<string> {
  const response = await post(`/ui/exports?workspace_id=${acme.id}`, exportFields(destinationId, overrides), HTMX);
  expect(response.status, await response.clone().text()).toBe(204);
  const next = response.headers.get('hx-redirect')!;
  expect(next).toMatch(new RegExp(`^/ui/exports/[0-9a-f-]{36}\\?workspace_id=${acme.id}$`));
  return next;
}

const exportIdOf = (url: string) => url.slice('/ui/exports/'.length, url.indexOf('?'));

interface Run {
  status: string;
  retry_number: number;
  errors: Record<string, string> | null;
  metadata: { result: { rows_written: number; exported_files: string[] } | null };
}

describe('the exports of a workspace at /ui/exports', () => {
  it('lists the destinations and exports the API lists, each export linking to its page', async () => {
    const destinationId = await createDestinationFromForm();
    const exportId = exportIdOf(await createExportFromForm(destinationId));
    const html = await page(`/ui/exports?workspace_id=${acme.id}`);
    expect(html).toContain('<a href="/ui/exports" aria-current="page">Exports</a>');
    expect(html).toContain(`<option value="${acme.id}" selected="">`);
    expect(html).toContain('<th scope="row">ui destination<div class="muted mono">');
    expect(html).toContain(`${fixtures.objstore.buckets[0]}/from-the-ui`);
    expect(html).toContain(
      `<a href="/ui/exports/${exportId}?workspace_id=${acme.id}">ui destination · support-bot-staging · ` +
        `2026-10-01 00:00 → 2026-10-03 00:00</a><div class="muted mono">${exportId}</div>`,
    );
    expect(html).toContain('support-bot-staging');
    // A Created export refreshes the list every second until it ends.
    expect(html).toMatch(/<div id="export-list" hx-get="[^"]+" hx-trigger="every 1s"/);
    // The fixture secret the form used never reaches the page.
    expect(html).not.toContain(fixtures.objstore.keys[0]!.secret_access_key);
  });

  it('answers htmx with the workspace part alone, for the workspace picker', async () => {
    const fragment = await page(`/ui/exports?workspace_id=${acme.id}`, HTMX);
    expect(fragment.startsWith('<div id="exports-workspace">')).toBe(true);
    expect(fragment).not.toContain('<html');
  });

  it("shows the API's refusal for a workspace on a plan without bulk exports, with a link to change the plan", async () => {
    const html = await page(`/ui/exports?workspace_id=${initech.id}`);
    expect(html).toMatch(
      /<p class="error" role="alert">Bulk export is only available on the Plus and Enterprise plans/,
    );
    expect(html).toContain('<a href="/ui/state#plans">Change the workspace&#39;s plan</a>');
  });

  it("shows the API's refusal next to the export form, with what was typed", async () => {
    const destinationId = await createDestinationFromForm();
    const fields = exportFields(destinationId, {
      start_time: '2026-10-03T00:00',
      end_time: '2026-10-01T00:00',
      filter: 'eq(is_root, true)',
    });
    const whole = await post(`/ui/exports?workspace_id=${acme.id}`, fields);
    expect(whole.status).toBe(422);
    const html = await whole.text();
    expect(html).toContain('role="alert">start_time must be before end_time</p>');
    expect(html).toContain('value="eq(is_root, true)"');
    // htmx swaps in only a success, so it gets the form with the alert as a 200.
    const fragment = await post(`/ui/exports?workspace_id=${acme.id}`, fields, HTMX);
    expect(fragment.status).toBe(200);
    expect(await fragment.text()).toMatch(
      /^<div id="exports-workspace">.*role="alert">start_time must be before end_time/s,
    );
    expect((await acmeApi().get('/api/v1/bulk-exports')).body).toEqual([]);
  });

  it('keeps a typed secret out of the page, the journal and the log', async () => {
    const key = fixtures.objstore.keys[0]!;
    const fields = {
      display_name: 'typed secret',
      bucket_name: fixtures.objstore.buckets[0]!,
      prefix: 'typed',
      endpoint_url: '',
      access_key_id: key.access_key_id,
      secret_access_key: key.secret_access_key,
    };
    expect((await post(`/ui/exports/destinations?workspace_id=${acme.id}`, fields)).status).toBe(303);
    const refused = await post(`/ui/exports/destinations?workspace_id=${acme.id}`, {
      ...fields,
      display_name: 'not/allowed',
    });
    expect(refused.status).toBe(422);
    const shown = [await refused.text(), await page(`/ui/exports?workspace_id=${acme.id}`)];
    const journal = (await inProcessApi(lp).get('/_localplane/requests')).text;
    for (const text of [...shown, journal, logs.join('\n')]) expect(text).not.toContain(key.secret_access_key);
  });

  it("shows the destination validation's refusal next to the destination form", async () => {
    await inProcessApi(lp).post('/_localplane/faults/destination-validations', { error: 'access_denied' });
    const response = await post(`/ui/exports/destinations?workspace_id=${acme.id}`, {
      display_name: 'refused',
      bucket_name: fixtures.objstore.buckets[0]!,
      prefix: 'x',
      access_key_id: fixtures.objstore.keys[0]!.access_key_id,
      secret_access_key: '',
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/role="alert">Failed to validate objstore destination: [^<]*AccessDenied/);
  });
});

describe("an export's page at /ui/exports/<id>", () => {
  it('follows an export created from the form to Completed, with its progress and the files each run wrote', async () => {
    const destinationId = await createDestinationFromForm();
    const url = await createExportFromForm(destinationId);
    const exportId = exportIdOf(url);

    const before = await page(url);
    expect(before).toContain('<span class="badge export-status active">Created</span>');
    expect(before).toContain('0 of 2');
    expect(before).toMatch(/<div id="export-live" hx-get="[^"]+" hx-trigger="every 1s" hx-swap="outerHTML">/);
    expect(before).toContain(`<a href="/ui/sql?export_id=${exportId}">`);

    await advance(0);

    const runs = (await acmeApi().get(`/api/v1/bulk-exports/${exportId}/runs`)).body as Run[];
    expect(runs.map((run) => run.status)).toEqual(['Completed', 'Completed']);
    const files = runs.flatMap((run) => run.metadata.result!.exported_files);
    expect(files.length).toBeGreaterThan(1);
    const rows = runs.reduce((sum, run) => sum + run.metadata.result!.rows_written, 0);

    // What the polling asks for: the live part alone, which no longer polls once all has ended.
    const after = await page(url, HTMX);
    expect(after.startsWith('<div id="export-live">')).toBe(true);
    expect(after).toContain(
      '<div class="figure" role="status"><span class="badge export-status done">Completed</span>',
    );
    expect(after).toContain('2 of 2');
    expect(after).toContain(`<div class="figure">${rows.toLocaleString('en')}</div>`);
    expect(after).not.toContain('hx-trigger');
    for (const file of files) {
      const [bucket, ...key] = file.split('/');
      expect(after).toContain(`href="/ui/objects/${bucket}/object?key=${encodeURIComponent(key.join('/'))}"`);
    }
    expect(after).not.toContain('Cancel export');
  });

  it('shows the errors of failed attempts and the retry that completed the run', async () => {
    const armed = await post(
      `/ui/exports/knobs?workspace_id=${acme.id}`,
      { mode: 'fail', count: '1', attempts: '1', message: 'the ui armed this' },
      HTMX,
    );
    expect(armed.status).toBe(200);
    expect(await armed.text()).toMatch(
      new RegExp(
        String.raw`^<section id="export-run-knobs".*export runs fail their first 1 attempt\(s\): ` +
          String.raw`“the ui armed this” <span class="badge">1 left<\/span>`,
        's',
      ),
    );

    const url = await createExportFromForm(await createDestinationFromForm(), { end_time: '2026-10-02T00:00' });
    await advance(0);
    const retrying = await page(url, HTMX);
    expect(retrying).toContain('<dt>retry_0</dt><dd>the ui armed this</dd>');
    expect(retrying).toContain('hx-trigger="every 1s"');

    const { export_run_retry_delay_seconds: delay } = (await inProcessApi(lp).get('/_localplane/config')).body as {
      export_run_retry_delay_seconds: number;
    };
    await advance(delay);
    const done = await page(url, HTMX);
    expect(done).toContain('<span class="badge export-status done">Completed</span>');
    expect(done).toMatch(/<td class="num">1<\/td>/);
    expect(done).toContain('<dt>retry_0</dt><dd>the ui armed this</dd>');
    expect(done).toContain('.parquet</a>');
  });

  it("follows a recurring export through its child exports' runs", async () => {
    // One window, one UTC day, has ended by then: one child export, with one run.
    await inProcessApi(lp).post('/_localplane/clock/set', { time: '2027-01-02T12:00:00Z' });
    const url = await createExportFromForm(await createDestinationFromForm(), {
      start_time: '2027-01-01T00:00',
      end_time: '',
      interval_hours: '24',
    });
    expect(await page(url)).toContain('No child export has been spawned yet.');
    await advance(0);
    const [child] = (await acmeApi().get(`/api/v1/bulk-exports/runs?source_bulk_export_id=${exportIdOf(url)}`))
      .body as (Run & { bulk_export_id: string })[];
    expect(child!.status).toBe('Completed');
    const html = await page(url, HTMX);
    expect(html).toContain('<h2 id="runs-heading">Runs of its child exports</h2>');
    expect(html).toContain(
      `<a href="/ui/exports/${child!.bulk_export_id}?workspace_id=${acme.id}">${child!.bulk_export_id.slice(0, 8)}</a>`,
    );
    expect(html).toContain('1 of 1');
    expect(html).toContain('<span class="badge export-status active">IntervalScheduled</span>');
  });

  it("names each file's tracing project for an export of all experiments", async () => {
    const url = await createExportFromForm(await createDestinationFromForm(), {
      session_id: 'all',
      end_time: '2026-10-02T00:00',
    });
    await advance(0);
    const html = await page(url, HTMX);
    expect(html).toContain('<span class="badge export-status done">Completed</span>');
    const labels = [...html.matchAll(/<a href="\/ui\/objects\/[^"]+" class="mono" title="[^"]+">([^<]+)<\/a>/g)].map(
      (match) => match[1]!.split('/')[0],
    );
    expect(new Set(labels)).toEqual(new Set(['support-bot-production', 'support-bot-staging']));
  });

  it('shows the knob form refusal on the exports view', async () => {
    const response = await post(
      `/ui/exports/knobs?workspace_id=${acme.id}`,
      { mode: 'slow', count: '0', delay_seconds: '60' },
      HTMX,
    );
    expect(await response.text()).toMatch(
      /<a href="#invalid-count">Count: [^<]+<\/a>.*<input name="count" [^>]*aria-invalid="true"/s,
    );
    expect(
      ((await inProcessApi(lp).get('/_localplane/faults')).body as { export_runs: unknown[] }).export_runs,
    ).toEqual([]);
  });

  it('cancels a running export, and its page ends polling', async () => {
    const url = await createExportFromForm(await createDestinationFromForm());
    const exportId = exportIdOf(url);
    const cancelled = await post(`/ui/exports/${exportId}/cancel?workspace_id=${acme.id}`, {}, HTMX);
    const fragment = await cancelled.text();
    expect(fragment).toContain('<span class="badge export-status failed">Cancelled</span>');
    expect(fragment).not.toContain('hx-trigger');
    expect(((await acmeApi().get(`/api/v1/bulk-exports/${exportId}`)).body as { status: string }).status).toBe(
      'Cancelled',
    );
    const again = await post(`/ui/exports/${exportId}/cancel?workspace_id=${acme.id}`, {});
    expect(again.status).toBe(303);
  });

  it('finds the workspace of an export linked without one', async () => {
    const url = await createExportFromForm(await createDestinationFromForm());
    const exportId = exportIdOf(url);
    const html = await page(`/ui/exports/${exportId}`);
    expect(html).toContain(`<a href="/ui/exports?workspace_id=${acme.id}">Exports of ${acme.name}</a>`);
    const unknown = await lp.request('/ui/exports/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain(
      'role="alert">Bulk export 00000000-0000-4000-8000-000000000000 not found in any workspace</p>',
    );
  });
});
