/**
 * The Requests view's live rows in Chromium: ui.js makes them from the stream's chunks of entry
 * summaries exactly as the server renders the same entries, keeps the filter and the newest N
 * through a burst, and their links open the detail pane.
 */
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/journal/schemas.ts';
import { useBrowser } from '../support/browser.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const MISSING_DESTINATION = '/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000';

const rowsHtml = (page: Page) =>
  page.locator('#request-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => row.outerHTML));
const rowIds = (page: Page) =>
  page.locator('#request-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => Number(row.dataset.id)));
const newest = async (query: string) =>
  (await ctx.admin.request<{ requests: JournalEntry[] }>('GET', `/requests?order=desc&${query}`)).body.requests;

describe('the live rows of the Requests view in Chromium', () => {
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
  });

  it('are the rows the server renders for the same entries, and their links open the detail pane', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/requests?status=4xx');
    await page.getByRole('cell', { name: 'No request matches yet.' }).waitFor();
    await acme().get('/api/v1/bulk-exports');
    await acme().get(MISSING_DESTINATION);
    await ctx.api.request('GET', '/v2/deployments');
    const [latest] = await newest('limit=1');
    await page.locator(`#request-${latest!.id}`).waitFor();
    const live = await rowsHtml(page);
    expect(live).toHaveLength(2);
    expect(live.join('')).toContain(`>${workspaceByTier(ctx.fixtures, 'plus').name}<`);

    await page.reload();
    await page.locator(`#request-${latest!.id}`).waitFor();
    expect(await rowsHtml(page)).toEqual(live);

    const reopened = await browser.openDashboard(ctx.instance, '/ui/requests?status=4xx');
    await acme().get(`${MISSING_DESTINATION}?live=1`);
    const [added] = await newest('limit=1');
    // The page stays (htmx swaps the pane): a mark set on it survives the click, and the keyboard's Enter.
    await reopened.evaluate(() => Object.assign(window, { samePage: true }));
    await reopened.locator(`#request-${added!.id}`).getByRole('link').click();
    const pane = reopened.getByRole('region', { name: 'Request details' });
    await pane.getByRole('heading', { name: `GET ${MISSING_DESTINATION}` }).waitFor();
    expect(new URL(reopened.url()).pathname).toBe(`/ui/requests/${added!.id}`);
    await acme().get(`${MISSING_DESTINATION}?live=2`);
    const [next] = await newest('limit=1');
    await reopened.locator(`#request-${next!.id}`).getByRole('link').focus();
    await reopened.keyboard.press('Enter');
    await reopened.waitForURL((url) => url.pathname === `/ui/requests/${next!.id}`);
    await expect.poll(() => pane.textContent()).toContain('live=2');
    expect(await reopened.evaluate(() => (window as { samePage?: boolean }).samePage)).toBe(true);
    expect(browser.pageErrors.filter((error) => !error.includes('net::ERR_ABORTED'))).toEqual([]);
  });

  it('keep the filter and the newest N through a burst, each request once', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/requests?status=404&limit=20');
    await page.getByRole('cell', { name: 'No request matches yet.' }).waitFor();
    for (let n = 0; n < 60; n++)
      await Promise.all([acme().get(`${MISSING_DESTINATION}?n=${n}`), acme().get(`/api/v1/bulk-exports?n=${n}`)]);
    const expected = (await newest('status=404&limit=20')).map((entry) => entry.id);
    await page.waitForFunction(
      (top) => document.querySelector('#request-rows tr[data-id]')?.getAttribute('data-id') === String(top),
      expected[0],
    );
    expect(await rowIds(page)).toEqual(expected);
  });
});
