/**
 * The Requests view in Chromium, as a person uses it: API requests appearing live at the top,
 * filtering (the URL is the filtered view), pausing and resuming without losing a request,
 * opening one's details and copying it as curl; screenshots and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_JOURNAL_STREAMS } from '../../src/journal/stream.ts';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { openEventStream } from '../support/event-stream.ts';
import { eventually, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const MISSING_DESTINATION = '/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000';

/**
 * What went wrong in the page, but the streams it closes on purpose (a new filter, Pause), which Chromium reports as
 * aborted.
 */
const pageErrors = () =>
  browser.pageErrors.filter((error) => !/^GET \S+\/ui\/requests\/stream\?\S* failed: net::ERR_ABORTED$/.test(error));

/** The table's rows, top (newest) first, as path and status. */
const rowsOf = (page: Page) =>
  page
    .locator('#request-rows tr[data-id]')
    .evaluateAll((rows) =>
      rows.map((row) => `${row.querySelector('th')!.textContent} ${row.querySelector('td.num')!.textContent}`),
    );

/** Waits until the table's rows are these, top first (the stream puts new ones there). */
async function rowsShow(page: Page, expected: string[]) {
  await page.waitForFunction(
    (wanted) =>
      JSON.stringify(
        [...document.querySelectorAll('#request-rows tr[data-id]')].map(
          (row) => `${row.querySelector('th')!.textContent} ${row.querySelector('td.num')!.textContent}`,
        ),
      ) === JSON.stringify(wanted),
    expected,
  );
}

describe('the Requests view in Chromium', () => {
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows API requests live, newest first; filters by URL; pauses and resumes without losing a request', async () => {
    await acme().get('/api/v1/bulk-exports');
    const page = await browser.openDashboard(ctx.instance, '/ui/requests');
    expect(await page.title()).toBe('Requests · localplane');
    expect(await rowsOf(page)).toEqual(['/api/v1/bulk-exports 200']);

    await acme().get(MISSING_DESTINATION);
    await ctx.api.request('GET', '/v2/deployments');
    await rowsShow(page, ['/v2/deployments 401', `${MISSING_DESTINATION} 404`, '/api/v1/bulk-exports 200']);

    const filters = page.getByRole('form', { name: 'Filter requests' });
    await filters.getByLabel('Status or class').fill('4xx');
    await filters.getByLabel('Path glob').fill('/api/**');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await rowsShow(page, [`${MISSING_DESTINATION} 404`]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('4xx');
    expect(new URL(page.url()).searchParams.get('path')).toBe('/api/**');

    // Live within the filter: the 200 and the request outside /api are not shown.
    await acme().get('/api/v1/bulk-exports');
    await ctx.api.request('GET', '/v2/deployments');
    await ctx.api.request('GET', '/api/v1/bulk-exports');
    await rowsShow(page, ['/api/v1/bulk-exports 401', `${MISSING_DESTINATION} 404`]);

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume', pressed: true }).waitFor();
    expect(await page.locator('#requests-live').getAttribute('sse-connect')).toBeNull();
    await acme().get(`${MISSING_DESTINATION}?while=paused`);
    expect(await rowsOf(page)).toEqual(['/api/v1/bulk-exports 401', `${MISSING_DESTINATION} 404`]);
    await page.getByRole('button', { name: 'Resume' }).click();
    await rowsShow(page, [`${MISSING_DESTINATION} 404`, '/api/v1/bulk-exports 401', `${MISSING_DESTINATION} 404`]);
    await page.getByRole('button', { name: 'Pause', pressed: false }).waitFor();
    await acme().get(`${MISSING_DESTINATION}?after=resume`);
    await rowsShow(page, [
      `${MISSING_DESTINATION} 404`,
      `${MISSING_DESTINATION} 404`,
      '/api/v1/bulk-exports 401',
      `${MISSING_DESTINATION} 404`,
    ]);
    await screenshot(page, 'requests');
    await checkAccessibility(page);
    expect(pageErrors()).toEqual([]);
  });

  it('keeps the newest N rows as new ones come, the "none yet" row gone with the first', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/requests?limit=2');
    await page.getByRole('cell', { name: 'No request matches yet.' }).waitFor();
    await acme().get('/api/v1/bulk-exports?page=1');
    await rowsShow(page, ['/api/v1/bulk-exports 200']);
    expect(await page.getByRole('cell', { name: 'No request matches yet.' }).count()).toBe(0);
    await acme().get(MISSING_DESTINATION);
    await ctx.api.request('GET', '/v2/deployments');
    await rowsShow(page, ['/v2/deployments 401', `${MISSING_DESTINATION} 404`]);
    expect(pageErrors()).toEqual([]);
  });

  it("lets the API's stream go when the page is closed", async () => {
    // No heartbeat: a write to the closed connection would find it gone sooner or later.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const page = await browser.openDashboard(ctx.instance, '/ui/requests');
    await acme().get('/api/v1/bulk-exports');
    await rowsShow(page, ['/api/v1/bulk-exports 200']);
    await page.close();
    // Every stream the instance allows opens again: the page's is gone.
    const streams = await eventually(async () => {
      const opened = await Promise.all(
        Array.from({ length: MAX_JOURNAL_STREAMS }, () =>
          openEventStream(`${ctx.instance.apiUrl}/_localplane/requests/stream`),
        ),
      );
      if (opened.every(({ reader }) => reader !== null)) return opened;
      await Promise.all(
        opened.flatMap(({ response, reader }) =>
          reader ? [reader.cancel()] : response.body ? [response.body.cancel()] : [],
        ),
      );
      return undefined;
    }, "the page's stream to be let go");
    await Promise.all(streams.map(({ reader }) => reader!.cancel()));
  });

  it("opens a request's details beside the list, its own URL, secrets masked, and copies it as curl", async () => {
    await acme().get('/v2/deployments?limit=2');
    const page = await browser.openDashboard(ctx.instance, '/ui/requests', {
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await page.getByRole('link', { name: '/v2/deployments' }).click();
    const pane = page.getByRole('region', { name: 'Request details' });
    await pane.getByRole('heading', { name: 'GET /v2/deployments' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/ui\/requests\/\d+$/);
    const headers = pane.locator('dl.details.mono').nth(1);
    expect(
      await headers
        .locator('dt', { hasText: /^x-api-key$/ })
        .locator('xpath=following-sibling::dd[1]')
        .textContent(),
    ).toBe('********');
    expect(await pane.textContent()).not.toContain(workspaceByTier(ctx.fixtures, 'plus').api_key);

    await pane.getByRole('button', { name: 'Copy as curl' }).click();
    await pane.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await pane.locator('pre.curl').textContent());
    expect(copied).toMatch(/^curl 'http:\/\/127\.0\.0\.1:\d+\/v2\/deployments\?limit=2' .*-H 'x-api-key: \*{8}'/);
    await screenshot(page, 'requests-detail');
    await checkAccessibility(page);

    // The pane's URL opened afresh shows the list with the same pane.
    const reopened = await browser.openDashboard(ctx.instance, new URL(page.url()).pathname);
    await reopened
      .getByRole('region', { name: 'Request details' })
      .getByRole('heading', { name: 'GET /v2/deployments' })
      .waitFor();
    expect(pageErrors()).toEqual([]);
  });
});
