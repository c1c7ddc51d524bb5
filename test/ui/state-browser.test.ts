/**
 * The State view in Chromium, as a person uses it: save a snapshot, reset (by keyboard alone,
 * through the confirmation), restore the snapshot, download it and upload it back; each step
 * checked through the API. A confirmation dismissed changes nothing. Screenshot and axe-core.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const scratch = mkdtempSync(join(tmpdir(), 'localplane-ui-state-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const plus = () => workspaceByTier(ctx.fixtures, 'plus');

async function destinationNames(): Promise<string[]> {
  const reply = await ctx.api.as(plus()).get('/api/v1/bulk-exports/destinations');
  return (reply.body as { display_name: string }[]).map((destination) => destination.display_name).sort();
}

const savedNames = async () =>
  ((await ctx.admin.request('GET', '/snapshots')).body as { snapshots: { name: string }[] }).snapshots.map(
    (saved) => saved.name,
  );

/** Answers the next confirmation dialog (accepting or dismissing it) and gives its message. */
function answerConfirmation(page: Page, accept: boolean): Promise<string> {
  return new Promise((resolve) =>
    page.once('dialog', (dialog: Dialog) => {
      resolve(dialog.message());
      void (accept ? dialog.accept() : dialog.dismiss());
    }),
  );
}

/** The panel's message once an action is done (htmx swaps the panel and focuses it). */
const notice = (page: Page) => page.getByRole('status').textContent();

describe('the State view at /ui/state in Chromium', () => {
  it(
    'snapshot, reset by keyboard, restore, download and upload back: each step as the API sees it; screenshot ' +
      'and axe-core',
    async () => {
      const added = await ctx.api.as(plus()).post('/api/v1/bulk-exports/destinations', {
        display_name: 'kept by the snapshot',
        config: {
          bucket_name: ctx.fixtures.objstore.buckets[0],
          prefix: 'ui-state',
          endpoint_url: ctx.fixtures.objstore.endpoint_url,
        },
        credentials: credentialsOf(fullKey(ctx.fixtures)),
      });
      expect(added.status).toBe(200);
      const page = await browser.openDashboard(ctx.instance, '/ui/state');
      expect(await page.title()).toBe('State · localplane');

      // Save, under a name typed in.
      await page.getByLabel('File name').fill('before-reset.snapshot');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => notice(page)).toMatch(/^Saved before-reset\.snapshot \(\d+\.\d KiB\)\.$/);
      expect(await savedNames()).toEqual(['before-reset.snapshot']);
      expect(await page.getByRole('rowheader', { name: 'before-reset.snapshot' }).count()).toBe(1);

      // Reset everything by keyboard alone: the select, then the button, then the confirmation.
      await page.getByLabel('What to reset').focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Reset');
      const resetAsked = answerConfirmation(page, true);
      await page.keyboard.press('Enter');
      expect(await resetAsked).toBe('Reset to the seed? What is not saved in a snapshot is lost.');
      await expect.poll(() => notice(page)).toBe('Everything is back to the seed.');
      // htmx focuses the message once the swapped panel settles.
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('role')), {
          message: 'the message takes the focus',
        })
        .toBe('status');
      expect(await destinationNames()).toEqual([]);

      // A dismissed confirmation changes nothing.
      const deleteAsked = answerConfirmation(page, false);
      await page.getByRole('button', { name: 'Delete before-reset.snapshot' }).click();
      expect(await deleteAsked).toBe('Delete the saved snapshot before-reset.snapshot?');
      expect(await savedNames()).toEqual(['before-reset.snapshot']);

      // Restore.
      const restoreAsked = answerConfirmation(page, true);
      await page.getByRole('button', { name: 'Restore before-reset.snapshot' }).click();
      expect(await restoreAsked).toBe(
        'Replace the whole state with before-reset.snapshot? What is not saved in a snapshot is lost.',
      );
      await expect.poll(() => notice(page)).toBe('Restored before-reset.snapshot.');
      expect(await destinationNames()).toEqual(['kept by the snapshot']);

      // Download, reset, upload the downloaded file back and restore it.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download before-reset.snapshot' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('before-reset.snapshot');
      const downloaded = join(scratch, 'downloaded.snapshot');
      await download.saveAs(downloaded);
      const onServer = await fetch(`${ctx.instance.apiUrl}/_localplane/snapshots/before-reset.snapshot`);
      expect(
        readFileSync(downloaded).equals(Buffer.from(await onServer.arrayBuffer())),
        'the download, byte for byte',
      ).toBe(true);
      await ctx.admin.request('POST', '/reset');
      expect(await destinationNames()).toEqual([]);
      await page.getByLabel('Snapshot file').setInputFiles(downloaded);
      await page.getByLabel(/^Save as/).fill('uploaded.snapshot');
      const uploadAsked = answerConfirmation(page, true);
      await page.getByRole('button', { name: 'Upload and restore' }).click();
      expect(await uploadAsked).toMatch(/^Upload this file and replace the whole state with it\?/);
      await expect.poll(() => notice(page)).toBe('Uploaded uploaded.snapshot and restored it.');
      expect(await destinationNames()).toEqual(['kept by the snapshot']);
      expect((await savedNames()).sort()).toEqual(['before-reset.snapshot', 'uploaded.snapshot']);

      await screenshot(page, 'state');
      await checkAccessibility(page);
      expect(browser.pageErrors).toEqual([]);
    },
  );

  it("shows a damaged upload's refusal at the file's field, keeps nothing, and passes axe-core in the dark theme", async () => {
    const damaged = join(scratch, 'damaged.snapshot');
    writeFileSync(damaged, 'localplane-snapshot 1\n{"not": "a header"}\n');
    const page = await browser.openDashboard(ctx.instance, '/ui/state', { colorScheme: 'dark' });
    await page.getByLabel('Snapshot file').setInputFiles(damaged);
    const asked = answerConfirmation(page, true);
    await page.getByRole('button', { name: 'Upload and restore' }).click();
    await asked;
    // The refusal at the file's field, which has the focus.
    const file = page.getByLabel('Snapshot file');
    await expect.poll(() => file.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#invalid-file-error').textContent()).toBe(
      'the upload "damaged.snapshot" is not a usable localplane snapshot: its header is damaged',
    );
    expect(await file.getAttribute('aria-describedby')).toBe('invalid-file-error');
    expect(await file.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(await savedNames()).not.toContain('damaged.snapshot');
    await screenshot(page, 'state-refused-dark');
    await checkAccessibility(page);
  });
});
