/**
 * The object browser in Chromium at 1440×900 and 390×844 with a 190-character key: the listing and the object's page
 * keep Size on screen (the key wraps at its folders); the object page's links and copy buttons; a key pair added and
 * revoked after a confirmation; screenshots and axe-core's check.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { fullKey, useLocalplane } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

const VIEWPORTS = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

const BUCKET = 'warehouse-landing';
const EXPORT_ID = '5d0c2b9e-8f7a-4c1d-a3b2-9e8f7a6b5c4d';
/** 190 characters, most of them in folder names with no break point of their own. */
const LONG_KEY = `long/export_id=${EXPORT_ID}/${'x'.repeat(60)}/${'y'.repeat(60)}/day=2/file.parquet`;

beforeAll(async () => {
  expect(LONG_KEY.length).toBeGreaterThanOrEqual(190);
  const s3 = s3For(ctx.fixtures.objstore.endpoint_url, fullKey(ctx.fixtures));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: LONG_KEY, Body: 'not parquet' }));
});

describe('a 190-character key in Chromium', () => {
  for (const { name, viewport } of VIEWPORTS) {
    it(`keeps the listing's Size column on screen at ${viewport.width} px`, async () => {
      const page = await browser.openDashboard(ctx.instance, `/ui/objects/${BUCKET}?search=${'y'.repeat(20)}`, {
        viewport,
      });
      const table = page.getByRole('table', { name: 'Keys found' });
      await table.getByRole('link', { name: LONG_KEY }).waitFor();
      const { scrollWidth, clientWidth } = await table.evaluate((element) => ({
        scrollWidth: element.scrollWidth,
        clientWidth: element.clientWidth,
      }));
      expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
      const size = (await table.locator('tbody td.num').first().boundingBox())!;
      expect(size.x + size.width).toBeLessThanOrEqual(viewport.width);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await screenshot(page, `objects-long-key-${name}`);

      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('key') === LONG_KEY),
        table.getByRole('link', { name: LONG_KEY }).click(),
      ]);
      const metadata = page.getByRole('table', { name: 'Metadata' });
      await metadata.waitFor();
      const box = await metadata.evaluate((element) => [element.scrollWidth, element.clientWidth]);
      expect(box[0]).toBeLessThanOrEqual(box[1]!);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      // Its export and SQL over its partition, and copies of its key and S3 URI.
      expect(await page.getByRole('link', { name: 'The export that wrote it' }).getAttribute('href')).toBe(
        `/ui/exports/${EXPORT_ID}`,
      );
      const sql = new URL((await page.getByRole('link', { name: 'Query in SQL' }).getAttribute('href'))!, 'http://x');
      expect(sql.searchParams.get('export_id')).toBe(EXPORT_ID);
      expect(await page.getByRole('button', { name: 'Copy key' }).getAttribute('data-copy')).toBe(LONG_KEY);
      expect(await page.getByRole('button', { name: 'Copy S3 URI' }).getAttribute('data-copy')).toBe(
        `s3://${BUCKET}/${LONG_KEY}`,
      );
      await screenshot(page, `objects-long-key-object-${name}`);
      await checkAccessibility(page);
      expect(browser.pageErrors).toEqual([]);
    });
  }
});

describe('key pairs in Chromium', () => {
  it('adds a key pair from the form and revokes it after a confirmation', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/objects', { viewport: VIEWPORTS[0].viewport });
    const form = page.getByRole('form', { name: 'New key pair' });
    await form.getByLabel('Access key id').fill('BROWSERKEY01');
    await form.getByLabel('Secret access key').fill('browser-secret-01');
    await form.getByLabel('multipart').uncheck();
    await form.getByRole('button', { name: 'Add key pair' }).click();
    const keys = page.getByRole('table', { name: 'Key pairs' });
    await keys.getByRole('rowheader', { name: 'BROWSERKEY01' }).waitFor();
    expect(await page.content()).not.toContain('browser-secret-01');
    const listed = (await ctx.admin.request('GET', '/objstore/keys')).body as {
      access_key_id: string;
      permissions: string[];
    }[];
    expect(listed.find((key) => key.access_key_id === 'BROWSERKEY01')?.permissions).toEqual([
      'create',
      'delete',
      'get',
    ]);
    await screenshot(page, 'objects-keys');
    await checkAccessibility(page);

    page.once('dialog', (dialog) => void dialog.accept());
    await keys.getByRole('button', { name: 'Revoke BROWSERKEY01' }).click();
    await keys.getByRole('rowheader', { name: 'BROWSERKEY01' }).waitFor({ state: 'detached' });
    const after = (await ctx.admin.request('GET', '/objstore/keys')).body as { access_key_id: string }[];
    expect(after.map((key) => key.access_key_id)).not.toContain('BROWSERKEY01');
    expect(browser.pageErrors).toEqual([]);
  });
});
