/**
 * Uploading and deleting an object in the object browser in Chromium: a file chosen in a folder's Upload form is
 * stored there with its type and listed on the page the form leads back to; its Delete button asks first, deletes it
 * and goes back to the folder. Screenshots at 1440x900 and 390x844 (never wider than the phone's screen), and
 * axe-core's check.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane } from '../support/instance.ts';

const ctx = useLocalplane();
const browser = useBrowser();
const PHONE = { width: 390, height: 844 };
const FOLDER = 'ui-upload/';
const CONTENT = '{"id": 1, "name": "ada"}\n';

const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const objectPath = (key: string) => `/objstore/buckets/${bucket()}/object?key=${encodeURIComponent(key)}`;
const folderPage = () => `/ui/objects/${bucket()}?prefix=${encodeURIComponent(FOLDER)}`;

/** How far the page reaches past the right edge of the window, in CSS pixels. */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Chooses a file in the Upload form and sends it; resolves once the folder lists it. */
async function uploadFile(page: Page, name: string) {
  const form = page.getByRole('form', { name: 'Upload' });
  await form
    .getByLabel('File', { exact: true })
    .setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(CONTENT) });
  await form.getByRole('button', { name: 'Upload' }).click();
  await page.getByRole('table', { name: 'Folders and objects' }).getByRole('link', { name, exact: true }).waitFor();
}

describe('uploading and deleting objects at /ui/objects in Chromium', () => {
  it('uploads a file into the folder shown, then deletes it after the confirmation', async () => {
    const page = await browser.openDashboard(ctx.instance, folderPage());
    expect(await page.getByLabel(/^Key/).inputValue()).toBe(FOLDER);
    await uploadFile(page, 'rows.json');
    expect(new URL(page.url()).searchParams.get('prefix')).toBe(FOLDER);
    const stored = await ctx.admin.request<{ size: number; content_type: string }>(
      'GET',
      objectPath(`${FOLDER}rows.json`),
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ size: CONTENT.length, content_type: 'application/json' });
    await screenshot(page, 'objects-upload');
    await checkAccessibility(page);

    await Promise.all([
      page.waitForURL((url) => url.pathname.endsWith('/object')),
      page.getByRole('link', { name: 'rows.json', exact: true }).click(),
    ]);
    await screenshot(page, 'objects-delete');
    await checkAccessibility(page);
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await Promise.all([
      page.waitForURL((url) => !url.pathname.endsWith('/object') && url.searchParams.get('prefix') === FOLDER),
      page.getByRole('button', { name: 'Delete', exact: true }).click(),
    ]);
    expect(asked).toEqual([`Delete ${FOLDER}rows.json from ${bucket()}? Its bytes are gone for good.`]);
    await page.getByText('Nothing here.').waitFor();
    expect((await ctx.admin.request('GET', objectPath(`${FOLDER}rows.json`))).status).toBe(404);
  });

  it('keeps the object when the confirmation is dismissed', async () => {
    const page = await browser.openDashboard(ctx.instance, folderPage());
    await uploadFile(page, 'kept.json');
    await Promise.all([
      page.waitForURL((url) => url.pathname.endsWith('/object')),
      page.getByRole('link', { name: 'kept.json', exact: true }).click(),
    ]);
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    expect(new URL(page.url()).pathname.endsWith('/object')).toBe(true);
    expect((await ctx.admin.request('GET', objectPath(`${FOLDER}kept.json`))).status).toBe(200);
  });

  it('fits a phone: the folder with its Upload form and the object page with Delete, at 390 px', async () => {
    const page = await browser.openDashboard(ctx.instance, folderPage(), { viewport: PHONE });
    await uploadFile(page, 'phone.json');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'objects-upload-390');
    await Promise.all([
      page.waitForURL((url) => url.pathname.endsWith('/object')),
      page.getByRole('link', { name: 'phone.json', exact: true }).click(),
    ]);
    await page.getByRole('button', { name: 'Delete', exact: true }).waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'objects-delete-390');
  });
});
