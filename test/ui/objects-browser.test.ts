/**
 * The object browser in Chromium, as a person uses it: an export writes real Parquet files, then
 * the buckets, a click down the export's folders (hive partitions read as `name = value`) to one
 * file, its metadata and the preview of its schema and first rows, the way back, a search across
 * the bucket; screenshots of each and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';

import { segmentLabel } from '../../src/ui/views/objects.tsx';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { exportClient, type ExportRun } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const exports = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const PREFIX = 'ui-objects';

let bucket: string;
/** The key of one Parquet file the export wrote. */
let parquetKey: string;

beforeAll(async () => {
  bucket = ctx.fixtures.objstore.buckets[0]!;
  const workspace = workspaceByTier(ctx.fixtures, 'plus');
  const session = workspace.sessions.find((candidate) => candidate.run_count < 50_000)!;
  const start = Date.parse(session.first_run_start_time);
  const exportId = await exports.startExport(await exports.createDestination(PREFIX), session.name, {
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 6 * 3_600_000).toISOString(),
  });
  await ctx.instance.clock.advance(0);
  await ctx.instance.clock.settle();
  const runs: ExportRun[] = await exports.getRuns(exportId);
  expect(runs.map((run) => run.status)).toEqual(['Completed']);
  // exported_files name the bucket first.
  parquetKey = runs[0]!.metadata.result.exported_files[0]!.slice(bucket.length + 1);
  expect(parquetKey).toMatch(new RegExp(`^${PREFIX}/export_id=${exportId}/.*\\.parquet$`));
});

const heading = (page: Page, name: string) => page.getByRole('heading', { name, exact: true });

describe('the object browser at /ui/objects in Chromium', () => {
  it(
    'goes from the buckets down the export folders to a Parquet file: its metadata, schema and first rows, and ' +
      'back',
    async () => {
      const page = await browser.openDashboard(ctx.instance, '/ui/objects');
      expect(await page.title()).toBe('Objects · localplane');
      await screenshot(page, 'objects');
      await checkAccessibility(page);

      await Promise.all([
        page.waitForURL(`**/ui/objects/${bucket}`),
        page.getByRole('link', { name: bucket, exact: true }).click(),
      ]);
      const segments = parquetKey.split('/');
      const fileName = segments.pop()!;
      for (const [index, segment] of segments.entries()) {
        const prefix = `${segments.slice(0, index + 1).join('/')}/`;
        const link = page
          .getByRole('table', { name: 'Folders and objects' })
          .getByRole('link', { name: `${segmentLabel(segment)}/`, exact: true });
        await Promise.all([page.waitForURL((url) => url.searchParams.get('prefix') === prefix), link.click()]);
        // The breadcrumbs end at the folder shown, read as a hive partition where it is one.
        await expect(
          page.getByRole('navigation', { name: 'Breadcrumb' }).locator('[aria-current="page"]').textContent(),
        ).resolves.toBe(segmentLabel(segment));
      }
      expect(await page.getByRole('navigation', { name: 'Breadcrumb' }).textContent()).toContain('export_id = ');
      await screenshot(page, 'objects-prefix');
      await checkAccessibility(page);

      await Promise.all([
        page.waitForURL((url) => url.pathname.endsWith('/object') && url.searchParams.get('key') === parquetKey),
        page.getByRole('link', { name: fileName, exact: true }).click(),
      ]);
      const details = (
        await ctx.admin.request('GET', `/objstore/buckets/${bucket}/object?key=${encodeURIComponent(parquetKey)}`)
      ).body;
      const metadata = page.getByRole('table', { name: 'Metadata' });
      for (const value of [
        parquetKey,
        `${details.size} bytes`,
        details.etag,
        details.content_type,
        details.checksums.CRC64NVME ?? Object.values(details.checksums)[0],
      ]) {
        expect(await metadata.textContent()).toContain(value);
      }

      const preview = (
        await ctx.admin.request('GET', `/objstore/preview?bucket=${bucket}&key=${encodeURIComponent(parquetKey)}`)
      ).body;
      expect(preview.kind).toBe('parquet');
      await expect(heading(page, 'Schema').isVisible()).resolves.toBe(true);
      const schemaRows = page.getByRole('table', { name: 'Schema' }).locator('tbody tr');
      expect(await schemaRows.count()).toBe(preview.schema.length);
      expect(await schemaRows.first().textContent()).toBe(`${preview.schema[0].name}${preview.schema[0].type}`);
      const rows = page.getByRole('table', { name: /^First rows/ });
      expect(await rows.locator('tbody tr').count()).toBe(preview.rows.length);
      expect(preview.rows.length).toBeGreaterThan(0);
      expect(await rows.locator('thead th').allTextContents()).toEqual(
        preview.schema.map((column: { name: string }) => column.name),
      );
      await screenshot(page, 'objects-parquet');
      await checkAccessibility(page);

      const download = page.getByRole('link', { name: 'Download' });
      expect(await download.getAttribute('href')).toBe(
        `/_localplane/objstore/buckets/${bucket}/object/content?key=${encodeURIComponent(parquetKey)}`,
      );

      // Back to the folder: the browser's history holds every step.
      await page.goBack();
      await page.waitForURL((url) => url.searchParams.get('prefix') === `${segments.join('/')}/`);
      await page.getByRole('link', { name: fileName, exact: true }).waitFor({ state: 'visible' });
      await expect(
        page.getByRole('navigation', { name: 'Breadcrumb' }).locator('[aria-current="page"]').textContent(),
      ).resolves.toBe(segmentLabel(segments.at(-1)!));
      expect(browser.pageErrors).toEqual([]);
    },
  );

  it('searches the whole bucket by a piece of a key, in any case, into a URL of its own', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/objects/${bucket}`);
    const name = parquetKey.slice(parquetKey.lastIndexOf('/') + 1);
    const piece = name.slice(0, 8).toUpperCase();
    await page.getByRole('searchbox', { name: `Search keys in ${bucket}` }).fill(piece);
    await Promise.all([
      page.waitForURL((url) => url.searchParams.get('search') === piece),
      page.getByRole('button', { name: 'Search' }).click(),
    ]);
    const found = page.getByRole('table', { name: 'Keys found' });
    await expect(found.getByRole('link', { name: parquetKey, exact: true }).isVisible()).resolves.toBe(true);
    await screenshot(page, 'objects-search');
    await checkAccessibility(page);

    // The URL alone brings the same results back.
    const again = await browser.openDashboard(ctx.instance, page.url().slice(ctx.instance.apiUrl.length));
    await expect(
      again.getByRole('table', { name: 'Keys found' }).getByRole('link', { name: parquetKey, exact: true }).isVisible(),
    ).resolves.toBe(true);
    expect(browser.pageErrors).toEqual([]);
  });
});
