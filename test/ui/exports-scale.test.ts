/**
 * The Exports view with many exports, as app.request() sees it: the list paged, filtered by status and destination and
 * ordered by creation, each export named by its destination, project and window; a recurring export's child exports
 * collapsed under it; the New export form above the list; a destination deleted and its key pair rotated; the objects
 * an export's folder holds beside its own counts; retry errors grouped; the links to its destination and requests;
 * the SQL page's export picker grouped and cut to the newest.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { errorGroups } from '../../src/ui/views/exports.tsx';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import type { FixturesView, FixtureWorkspace } from '../support/instance.ts';
import { HTMX, okPage, postForm } from './support/dashboard.ts';

let lp: InProcessLocalplane;
let fixtures: FixturesView;
let acme: FixtureWorkspace;

beforeAll(async () => {
  lp = await createLocalplane({ freezeClock: true });
  fixtures = await fixturesOf(lp);
  acme = fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
});

afterAll(async () => {
  await lp?.stop();
});

beforeEach(async () => {
  await lp.reset();
});

const admin = () => inProcessApi(lp);
const acmeApi = () => inProcessApi(lp, acme);
const page = (path: string, headers: Record<string, string> = {}) => okPage(lp, path, headers);
const advance = (seconds: number) => admin().post('/_localplane/clock/advance', { seconds });
const session = (name: string) => acme.sessions.find((candidate) => candidate.name === name)!.id;
const listUrl = (query = '') => `/ui/exports?workspace_id=${acme.id}${query}`;

async function createDestination(name: string): Promise<string> {
  const key = fixtures.objstore.keys[0]!;
  const response = await acmeApi().post<{ id: string }>('/api/v1/bulk-exports/destinations', {
    display_name: name,
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: name },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id;
}

async function createExport(destinationId: string, window: Record<string, unknown>): Promise<string> {
  const response = await acmeApi().post<{ id: string }>('/api/v1/bulk-exports', {
    bulk_export_destination_id: destinationId,
    session_id: session('support-bot-staging'),
    format_version: 'v2_beta',
    compression: 'snappy',
    ...window,
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id;
}

/** One-time exports of a day each in 2028, when the fixtures have no data: quick to run, and told apart by day. */
const emptyDay = (day: number) => ({
  start_time: `2028-01-${String(day).padStart(2, '0')}T00:00:00Z`,
  end_time: `2028-01-${String(day + 1).padStart(2, '0')}T00:00:00Z`,
});

/** The export ids the list's page links to, in order (child exports' links left out). */
const listedIds = (html: string) =>
  [
    ...html
      .replace(/<details.*?<\/details>/gs, '')
      .matchAll(/<tr><th scope="row"><a href="\/ui\/exports\/([0-9a-f-]{36})\?/g),
  ].map((match) => match[1]);

describe('the exports list at /ui/exports', () => {
  it('pages the exports twenty at a time, newest first, each named by destination, project and window', async () => {
    const destinationId = await createDestination('paged');
    const ids: string[] = [];
    for (let day = 1; day <= 25; day++) {
      ids.push(await createExport(destinationId, emptyDay(day)));
      await advance(1);
    }
    const first = await page(listUrl());
    expect(listedIds(first)).toEqual([...ids].reverse().slice(0, 20));
    expect(first).toContain('25 exports');
    expect(first).toContain('Page 1 of 2');
    expect(first).toContain(`<a href="/ui/exports?workspace_id=${acme.id}&amp;page=2">Next</a>`);
    // Named for a person, the UUID under the name.
    expect(first).toContain(
      `<a href="/ui/exports/${ids[24]}?workspace_id=${acme.id}">paged · support-bot-staging · ` +
        `2028-01-25 00:00 → 2028-01-26 00:00</a><div class="muted mono">${ids[24]}</div>`,
    );
    const second = await page(listUrl('&page=2'));
    expect(listedIds(second)).toEqual([...ids].reverse().slice(20));
    const oldest = await page(listUrl('&sort=oldest'));
    expect(listedIds(oldest)).toEqual(ids.slice(0, 20));
  });

  it('filters by status and by destination', async () => {
    const kept = await createDestination('kept');
    const other = await createDestination('other');
    const cancelled = await createExport(kept, emptyDay(1));
    const running = await createExport(kept, emptyDay(2));
    const elsewhere = await createExport(other, emptyDay(3));
    expect((await acmeApi().patch(`/api/v1/bulk-exports/${cancelled}`, { status: 'Cancelled' })).status).toBe(200);

    expect(listedIds(await page(listUrl('&status=Cancelled')))).toEqual([cancelled]);
    expect(listedIds(await page(listUrl(`&destination_id=${other}`)))).toEqual([elsewhere]);
    const html = await page(listUrl(`&status=Created&destination_id=${kept}`));
    expect(listedIds(html)).toEqual([running]);
    expect(html).toContain('<option value="Created" selected="">Created</option>');
    expect(html).toContain('1 matching export');
    // The filter form sends the names the list reads.
    for (const name of ['status', 'destination_id', 'sort']) expect(html).toContain(`<select name="${name}">`);
  });

  it("collapses a recurring export's sixty child exports under it, below the New export form", async () => {
    await admin().post('/_localplane/clock/set', { time: '2027-03-02T12:00:00Z' });
    const parent = await createExport(await createDestination('daily'), {
      start_time: '2027-01-01T00:00:00Z',
      interval_hours: 24,
    });
    await advance(0);
    const children = (
      await acmeApi().get<{ source_bulk_export_id: string | null }[]>('/api/v1/bulk-exports?limit=1000')
    ).body.filter((row) => row.source_bulk_export_id === parent);
    expect(children).toHaveLength(60);

    const html = await page(listUrl());
    expect(html.indexOf('<h2 id="new-export-heading">New export</h2>')).toBeGreaterThan(-1);
    expect(html.indexOf('<h2 id="new-export-heading">')).toBeLessThan(html.indexOf('<div id="export-list"'));
    // One row of the list, the parent; its children in a closed <details> that counts them by status.
    expect(listedIds(html)).toEqual([parent]);
    expect(html).toMatch(
      new RegExp(`<details class="children" id="children-${parent}"><summary>60 child exports: \\d+ \\w+`),
    );
    const childRows = (text: string) => text.match(/<table aria-label="Child exports of [^>]+>.*?<\/table>/s)![0];
    expect(childRows(html).match(/<tr>/g)).toHaveLength(11); // the head and 10 children
    const pageTwo = await page(listUrl(`&children_of=${parent}&children_page=2`));
    expect(pageTwo).toContain(`<details class="children" id="children-${parent}" open="">`);
    expect(pageTwo).toContain('Page 2 of 6');
    expect(childRows(pageTwo)).not.toEqual(childRows(html));
  });
});

describe('destinations at /ui/exports', () => {
  it("deletes a destination, and shows the API's refusal while an export uses it", async () => {
    const used = await createDestination('used');
    const unused = await createDestination('unused');
    await createExport(used, emptyDay(1));
    const html = await page(listUrl());
    expect(html).toContain(`hx-confirm="Delete the destination unused?"`);

    const refused = await postForm(lp, `/ui/exports/destinations/${used}/delete?workspace_id=${acme.id}`, {
      destination_id: used,
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/role="alert">Bulk export destination [0-9a-f-]+ is in use by bulk export/);

    const deleted = await postForm(
      lp,
      `/ui/exports/destinations/${unused}/delete?workspace_id=${acme.id}`,
      { destination_id: unused },
      HTMX,
    );
    expect(deleted.status).toBe(204);
    const left = (await acmeApi().get<{ id: string }[]>('/api/v1/bulk-exports/destinations')).body;
    expect(left.map((destination) => destination.id)).toEqual([used]);
  });

  it("rotates a destination's key pair, and shows the validation's refusal", async () => {
    const id = await createDestination('rotated');
    const before = (await acmeApi().get<{ updated_at: string }>(`/api/v1/bulk-exports/destinations/${id}`)).body;
    await advance(5);
    const key = fixtures.objstore.keys[0]!;
    const refused = await postForm(lp, `/ui/exports/destinations/${id}/rotate?workspace_id=${acme.id}`, {
      destination_id: id,
      access_key_id: key.access_key_id,
      secret_access_key: 'not-the-secret',
    });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    // At the secret's field: marked, described by the message, focused.
    const field = /<input[^>]*name="secret_access_key"[^>]*>/.exec(text)?.[0] ?? '';
    expect(field).toContain('aria-invalid="true"');
    expect(field).toContain('autofocus');
    const describedBy = /aria-describedby="([^"]*)"/.exec(field)?.[1] ?? '';
    expect(text).toMatch(new RegExp(`id="${describedBy}"[^>]*>Failed to validate objstore destination`));
    expect(text).not.toContain('not-the-secret');

    const rotated = await postForm(lp, `/ui/exports/destinations/${id}/rotate?workspace_id=${acme.id}`, {
      destination_id: id,
      access_key_id: key.access_key_id,
      secret_access_key: '',
    });
    expect(rotated.status).toBe(303);
    const after = (await acmeApi().get<{ updated_at: string }>(`/api/v1/bulk-exports/destinations/${id}`)).body;
    expect(after.updated_at).not.toBe(before.updated_at);
  });
});

describe("an export's page beside the objstore", () => {
  it("names a cancelled run's file that is in the bucket but not in the export's counts, linking to it", async () => {
    const destinationId = await createDestination('cancelled');
    await admin().post('/_localplane/faults/export-runs', { mode: 'slow', count: 1, delay_seconds: 60 });
    const exportId = await createExport(destinationId, {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(0);
    await advance(60);
    const bucket = fixtures.objstore.buckets[0]!;
    const stored = async () =>
      (
        await admin().get<{ objects: { key: string }[] }>(
          `/_localplane/objstore/buckets/${bucket}/objects?search=export_id=${exportId}/`,
        )
      ).body.objects;
    await expect.poll(async () => (await stored()).length).toBe(1);
    expect((await acmeApi().patch(`/api/v1/bulk-exports/${exportId}`, { status: 'Cancelled' })).status).toBe(200);

    const html = await page(`/ui/exports/${exportId}?workspace_id=${acme.id}`);
    expect(html).toContain('<div class="muted">in 0 files</div>');
    expect(html).toMatch(
      /1 file \([\d.]+ KiB\) from a cancelled run is in the bucket; the export&#39;s counts do not include it\./,
    );
    const [object] = await stored();
    expect(html).toContain(`href="/ui/objects/${bucket}/object?key=${encodeURIComponent(object!.key)}"`);
  });

  it('links to its destination and its requests', async () => {
    const destinationId = await createDestination('linked');
    const exportId = await createExport(destinationId, emptyDay(1));
    const html = await page(`/ui/exports/${exportId}?workspace_id=${acme.id}`);
    expect(html).toContain(`<a href="/ui/exports?workspace_id=${acme.id}#destination-${destinationId}">linked</a>`);
    // Named as the list names it, above its UUID title.
    expect(html).toContain(
      '<p class="export-name">linked · support-bot-staging · 2028-01-01 00:00 → 2028-01-02 00:00</p>',
    );
    const requests = html
      .match(/<a href="(\/ui\/requests\?path=[^"]+)">its API requests<\/a>/)![1]!
      .replaceAll('&amp;', '&');
    // The link finds the export's own creation in the journal.
    expect(await page(requests)).toContain(`/api/v1/bulk-exports`);
    expect(await page(listUrl())).toContain(`<tr id="destination-${destinationId}">`);
  });
});

describe('retry errors', () => {
  it('groups identical consecutive errors with their first and last attempt', () => {
    const errors = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`retry_${index}`, 'refused']));
    expect(errorGroups({ ...errors, retry_21: 'other' })).toEqual([
      { first: 'retry_0', last: 'retry_20', count: 21, message: 'refused' },
      { first: 'retry_21', last: 'retry_21', count: 1, message: 'other' },
    ]);
  });

  it("shows a run's repeated error once, with how many times", async () => {
    await admin().patch('/_localplane/config', { export_run_max_retries: 3, export_run_retry_delay_seconds: 1 });
    await admin().post('/_localplane/faults/export-runs', { mode: 'fail', count: 1, attempts: 4, message: 'same' });
    const exportId = await createExport(await createDestination('retried'), emptyDay(1));
    for (let step = 0; step < 4; step++) await advance(1);
    const html = await page(`/ui/exports/${exportId}?workspace_id=${acme.id}`, HTMX);
    expect(html).toContain('<dt>retry_0 – retry_3</dt><dd>same<span class="badge">× 4</span></dd>');
    // The run's row is the target of the Clock view's links to it.
    const [run] = (await acmeApi().get<{ id: string }[]>(`/api/v1/bulk-exports/${exportId}/runs`)).body;
    expect(html).toContain(`<tr id="run-${run!.id}">`);
  });
});

describe("the SQL page's export picker", () => {
  it('offers the newest twenty exports grouped by workspace and status, and takes a typed id', async () => {
    const destinationId = await createDestination('picked');
    const ids: string[] = [];
    for (let day = 1; day <= 25; day++) {
      ids.push(await createExport(destinationId, emptyDay(day)));
      await advance(1);
    }
    const html = await page('/ui/sql');
    const select = html.match(/<select name="export_id">.*?<\/select>/s)![0];
    expect(select.match(/<option /g)).toHaveLength(20);
    expect(select).toMatch(new RegExp(`<optgroup label="${acme.name} · \\w+">`));
    expect(select).not.toContain(ids[0]);
    expect(html).toContain('(the newest 20 of 25)');
    expect(html).toContain('<input name="typed_export_id"');
    // The oldest, typed, is the one queried, and the list shows it as chosen.
    const typed = await page(`/ui/sql?export_id=${ids[24]}&typed_export_id=${ids[0]}`);
    expect(typed).toMatch(new RegExp(`<option value="${ids[0]}" selected="">`));
    expect(typed).toContain(`<input name="typed_export_id" value="${ids[0]}"`);
  });
});
