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
  describe('the split view and the keyboard', () => {
    const WIDE = { viewport: { width: 1440, height: 900 } };
    const PHONE = {
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      colorScheme: 'dark' as const,
    };
    /** A 300-character path of 20-character segments. */
    const LONG_PATH =
      `/api/v1/bulk-exports/${Array.from({ length: 20 }, (_, index) => `segment-${index}-abcdefghij`).join('/')}`.slice(
        0,
        300,
      );

    /** A long path, then enough requests that the list is far taller than the window. */
    async function traffic() {
      await acme().get(LONG_PATH);
      for (let index = 0; index < 60; index++) await ctx.api.request('GET', `/v2/deployments?n=${index}`);
      await acme().get('/api/v1/bulk-exports');
    }

    const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;
    const focused = (page: Page) =>
      page.evaluate(() => {
        const element = document.activeElement!;
        return { id: element.id, text: element.textContent, row: element.closest('tr')?.id ?? null };
      });

    it('keeps the list and the detail apart with a 300-character path, the detail in view as the list scrolls, the row marked', async () => {
      expect(LONG_PATH).toHaveLength(300);
      await traffic();
      const page = await browser.openDashboard(ctx.instance, '/ui/requests', WIDE);
      const row = page.locator('#request-rows tr', { has: page.getByRole('link', { name: LONG_PATH, exact: true }) });
      await row.getByRole('link').click();
      const pane = page.getByRole('region', { name: 'Request details' });
      await pane.getByRole('heading', { level: 2 }).waitFor();
      expect(await row.getAttribute('aria-current')).toBe('true');
      expect(await page.locator('#request-rows tr[aria-current="true"]').count()).toBe(1);

      const detail = await box(page, '#request-detail');
      const table = await box(page, 'table.requests');
      const lastCells = await page
        .locator('table.requests tr > :last-child')
        .evaluateAll((cells) => cells.map((cell) => cell.getBoundingClientRect().right));
      expect(table.x + table.width).toBeLessThanOrEqual(detail.x);
      expect(Math.max(...lastCells)).toBeLessThanOrEqual(detail.x);
      // The path is cut in the list, whole in its title.
      const link = await box(page, `a[title="${LONG_PATH}"]`);
      expect(link.x + link.width).toBeLessThanOrEqual(detail.x);
      await screenshot(page, 'requests-split-1440');

      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.waitForFunction(() => window.scrollY > 900);
      const scrolled = await box(page, '#request-detail');
      // Stuck at the top, give or take the sub-pixel a scroll of fractional layout leaves (-0.2 seen under load).
      expect(scrolled.y).toBeGreaterThan(-1);
      expect(scrolled.y).toBeLessThan(100);
      expect(await pane.getByRole('button', { name: 'Copy as curl' }).isVisible()).toBe(true);
      await checkAccessibility(page);
      expect(pageErrors()).toEqual([]);
    });

    it('opens a request from the keyboard, reaches "Copy as curl" within 5 Tabs, goes back with Esc, moves with j and k', async () => {
      await traffic();
      const page = await browser.openDashboard(ctx.instance, '/ui/requests', WIDE);
      const ids = await page.locator('#request-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => row.id));
      await page.keyboard.press('j');
      expect((await focused(page)).row).toBe(ids[0]);
      await page.keyboard.press('j');
      await page.keyboard.press('j');
      expect((await focused(page)).row).toBe(ids[2]);
      await page.keyboard.press('k');
      expect((await focused(page)).row).toBe(ids[1]);

      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.id === 'request-title');
      let tabs = 0;
      while ((await focused(page)).text !== 'Copy as curl' && tabs < 5) {
        await page.keyboard.press('Tab');
        tabs++;
      }
      expect((await focused(page)).text).toBe('Copy as curl');
      expect(tabs).toBeLessThanOrEqual(5);
      expect(await page.locator(`#${ids[1]}`).getAttribute('aria-current')).toBe('true');

      await page.keyboard.press('Escape');
      expect(await focused(page)).toMatchObject({ row: ids[1] });
      await page.keyboard.press('j');
      expect((await focused(page)).row).toBe(ids[2]);

      // Typing in a field is typing: j stays in it.
      await page.getByLabel('Path glob').focus();
      await page.keyboard.press('j');
      expect(await page.getByLabel('Path glob').inputValue()).toBe('j');
      expect(pageErrors()).toEqual([]);
    });

    it('on a phone brings the detail into view when a row is tapped, and Esc closes it, back at the row', async () => {
      await traffic();
      const page = await browser.openDashboard(ctx.instance, '/ui/requests', PHONE);
      const last = page.locator('#request-rows tr[data-id]').last();
      await last.getByRole('link').tap();
      const heading = page.getByRole('region', { name: 'Request details' }).getByRole('heading', { level: 2 });
      await page.waitForFunction(() => document.activeElement?.id === 'request-title');
      const shown = (await heading.boundingBox())!;
      expect(shown.y).toBeGreaterThanOrEqual(0);
      expect(shown.y).toBeLessThan(844);
      // The table fits the phone's width: no sideways scrolling inside it or of the page because of it.
      expect(
        await page.locator('#requests-live').evaluate((section) => section.scrollWidth <= section.clientWidth),
      ).toBe(true);
      await screenshot(page, 'requests-detail-390-dark');
      await checkAccessibility(page);

      await page.keyboard.press('Escape');
      expect(await page.locator('#request-detail').isHidden()).toBe(true);
      expect((await focused(page)).row).toBe(await last.getAttribute('id'));
      expect(new URL(page.url()).pathname).toBe('/ui/requests');
      expect(pageErrors()).toEqual([]);
    });

    it('pages to older and newer requests by id, an older page not live, Newest live again', async () => {
      for (let index = 1; index <= 12; index++) await ctx.api.request('GET', `/v2/deployments?n=${index}`);
      const page = await browser.openDashboard(ctx.instance, '/ui/requests?limit=5', WIDE);
      const ids = () =>
        page.locator('#request-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => Number(row.dataset.id)));
      const idsShow = (expected: number[]) =>
        page.waitForFunction(
          (wanted) =>
            [...document.querySelectorAll<HTMLElement>('#request-rows tr[data-id]')]
              .map((row) => row.dataset.id)
              .join() === wanted.join(),
          expected,
        );
      const pages = page.getByRole('navigation', { name: 'Pages of requests' });
      expect(await ids()).toEqual([12, 11, 10, 9, 8]);
      await expect.poll(() => page.getByText('Showing 5 of 12 matching.').count()).toBe(1);

      await pages.getByRole('link', { name: 'Older' }).click();
      await idsShow([7, 6, 5, 4, 3]);
      expect(new URL(page.url()).search).toBe('?limit=5&before=8');
      expect(await page.locator('#requests-live').getAttribute('sse-connect')).toBeNull();
      await pages.getByRole('link', { name: 'Older' }).click();
      await idsShow([2, 1]);
      expect(await pages.getByRole('link', { name: 'Older' }).count()).toBe(0);
      await pages.getByRole('link', { name: 'Newer' }).click();
      await idsShow([7, 6, 5, 4, 3]);
      await pages.getByRole('link', { name: 'Newest' }).click();
      await idsShow([12, 11, 10, 9, 8]);
      await ctx.api.request('GET', '/v2/deployments?n=13');
      await idsShow([13, 12, 11, 10, 9]);
      expect(pageErrors()).toEqual([]);
    });

    it('links a fired rule to its row on the Faults view, and clears the journal after a confirmation', async () => {
      const rule = (
        await ctx.admin.request('POST', '/fault-rules', {
          body: { match: { path: '/v2/deployments' }, action: { status: 503 }, count: 1 },
        })
      ).body as { id: string };
      await ctx.api.request('GET', '/v2/deployments');
      const page = await browser.openDashboard(ctx.instance, '/ui/requests', WIDE);
      const ruleLink = page.locator('#request-rows').getByRole('link', { name: rule.id });
      expect(await ruleLink.getAttribute('href')).toBe(`/ui/faults#${rule.id}`);
      await ruleLink.click();
      await page.waitForURL(`**/ui/faults#${rule.id}`);
      expect(await page.locator(`[id="${rule.id}"]`).count()).toBe(1);

      await page.goto(`${ctx.instance.apiUrl}/ui/requests`);
      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Clear the journal' }).click();
      await page.getByText('The journal was emptied').waitFor();
      expect(asked).toMatch(/^Empty the request journal\?/);
      expect(await rowsOf(page)).toEqual([]);
      expect((await ctx.admin.request('GET', '/requests')).body).toMatchObject({ requests: [], total: 0 });
      // Live still: a new request shows.
      await ctx.api.request('GET', '/v2/deployments');
      await rowsShow(page, ['/v2/deployments 401']);
      expect(pageErrors()).toEqual([]);
    });
  });
});
