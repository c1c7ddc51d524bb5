/**
 * The Exports view with a recurring export's sixty child exports, in Chromium at 1440×900 and 390×844: the New export
 * form in the first viewport, the child exports collapsed and opened a page at a time, the list filtered by status, a
 * destination deleted after a confirmation; screenshots and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

const VIEWPORTS = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

let parentId: string;

async function createDestination(name: string): Promise<string> {
  const acme = workspaceByTier(ctx.fixtures, 'plus');
  const response = await ctx.api.as(acme).post('/api/v1/bulk-exports/destinations', {
    display_name: name,
    config: { bucket_name: ctx.fixtures.objstore.buckets[0], prefix: name },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id as string;
}

beforeAll(async () => {
  const acme = workspaceByTier(ctx.fixtures, 'plus');
  await ctx.admin.request('POST', '/clock/set', { body: { time: '2027-03-02T12:00:00Z' } });
  const created = await ctx.api.as(acme).post('/api/v1/bulk-exports', {
    bulk_export_destination_id: await createDestination('daily'),
    session_id: acme.sessions[0]!.id,
    start_time: '2027-01-01T00:00:00Z',
    interval_hours: 24,
    format_version: 'v2_beta',
    compression: 'snappy',
  });
  expect(created.status, created.text).toBe(200);
  parentId = created.body.id as string;
  await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 0 } });
  const all = (await ctx.api.as(acme).get('/api/v1/bulk-exports?limit=1000')).body as {
    source_bulk_export_id: string | null;
  }[];
  expect(all.filter((row) => row.source_bulk_export_id === parentId)).toHaveLength(60);
});

const openExports = (viewport: { width: number; height: number }, query = '') =>
  browser.openDashboard(ctx.instance, `/ui/exports?workspace_id=${workspaceByTier(ctx.fixtures, 'plus').id}${query}`, {
    viewport,
  });

/** Whether the element's top is within the first viewport of the page, unscrolled. */
const inFirstViewport = async (page: Page, selector: string) => {
  const box = await page.locator(selector).boundingBox();
  return box !== null && box.y + 20 < page.viewportSize()!.height;
};

describe('the exports list with sixty child exports in Chromium', () => {
  for (const { name, viewport } of VIEWPORTS) {
    it(`shows New export first and the child exports collapsed, at ${viewport.width} px`, async () => {
      const page = await openExports(viewport);
      expect(await inFirstViewport(page, '#new-export-heading')).toBe(true);
      const children = page.locator(`#children-${parentId}`);
      expect(await children.getAttribute('open')).toBeNull();
      expect(await children.locator('summary').textContent()).toMatch(/^60 child exports: \d+ \w+/);
      // Collapsed, the list is a few rows tall, not the 3,779 px of sixty.
      expect((await page.locator('#export-list').boundingBox())!.height).toBeLessThan(400);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await screenshot(page, `exports-list-${name}`);
      await checkAccessibility(page);

      // Opened, ten children; the pager moves through them with the details kept open.
      await children.locator('summary').click();
      const childRows = children.locator('tbody tr');
      expect(await childRows.count()).toBe(10);
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('children_page') === '2'),
        children.getByRole('link', { name: 'Next' }).click(),
      ]);
      await page.getByText('Page 2 of 6').waitFor();
      expect(await page.locator(`#children-${parentId}`).getAttribute('open')).toBe('');
      await screenshot(page, `exports-children-${name}`);
      expect(browser.pageErrors).toEqual([]);
    });
  }

  it('filters the list by status from its form', async () => {
    const page = await openExports(VIEWPORTS[0].viewport);
    const filters = page.getByRole('form', { name: 'Filter exports' });
    await filters.getByLabel('Status').selectOption('Completed');
    await Promise.all([
      page.waitForURL((url) => url.searchParams.get('status') === 'Completed'),
      filters.getByRole('button', { name: 'Show' }).click(),
    ]);
    // No export of the workspace is Completed but the recurring export's children may be: the parent stays when one is.
    const rows = page.locator('table.exports > tbody > tr:first-child');
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const all = (await ctx.api.as(acme).get('/api/v1/bulk-exports?limit=1000')).body as { status: string }[];
    expect(await rows.count()).toBe(all.some((row) => row.status === 'Completed') ? 1 : 0);
    await filters.getByLabel('Status').selectOption('Cancelled');
    await Promise.all([
      page.waitForURL((url) => url.searchParams.get('status') === 'Cancelled'),
      filters.getByRole('button', { name: 'Show' }).click(),
    ]);
    await page.getByText('0 matching exports').waitFor();
    expect(browser.pageErrors).toEqual([]);
  });

  it('deletes a destination after a confirmation', async () => {
    const destinationId = await createDestination('to-delete');
    const page = await openExports(VIEWPORTS[0].viewport);
    const row = page.locator(`#destination-${destinationId}`);
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toBe('Delete the destination to-delete?');
      void dialog.accept();
    });
    await row.getByRole('button', { name: 'Delete to-delete' }).click();
    await row.waitFor({ state: 'detached' });
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const left = (await ctx.api.as(acme).get('/api/v1/bulk-exports/destinations')).body as { id: string }[];
    expect(left.map((destination) => destination.id)).not.toContain(destinationId);
    expect(browser.pageErrors).toEqual([]);
  });
});
