/**
 * The Exports view in Chromium, as a person uses it: picking a workspace, creating a destination
 * and an export from the forms, arming the slow knob, and watching the export's page follow its
 * run to Completed by itself while the emulator clock is moved, then its files; screenshots and
 * axe-core's check.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

const advance = (seconds: number) => ctx.admin.request('POST', '/clock/advance', { body: { seconds } });

/** Waits for the page to show the text in its main part: what the page's own polling brings. */
const showsText = (page: Page, text: string) => page.locator('main').getByText(text, { exact: true }).first().waitFor();

describe('the Exports view in Chromium', () => {
  it(
    'creates a destination and an export from the forms, and the export page follows its run live to Completed ' +
      'and its files',
    async () => {
      const acme = workspaceByTier(ctx.fixtures, 'plus');
      const globex = workspaceByTier(ctx.fixtures, 'enterprise');
      const page = await browser.openDashboard(ctx.instance, '/ui/exports');
      expect(await page.title()).toBe('Exports · localplane');

      // The workspace picker swaps the workspace's part in and gives it its own URL.
      await page.getByRole('combobox', { name: /^Workspace/ }).selectOption(globex.id);
      await page.waitForURL(`**/ui/exports?workspace_id=${globex.id}`);
      await showsText(page, `No destinations in ${globex.name} yet.`);
      await page.getByRole('combobox', { name: /^Workspace/ }).selectOption(acme.id);
      await showsText(page, `No destinations in ${acme.name} yet.`);

      // The destination form's defaults: the embedded objstore with a fixture key pair, whose secret stays on the
      // server.
      await page.getByRole('button', { name: 'Create destination' }).click();
      await page.getByRole('rowheader', { name: 'local objstore' }).waitFor();
      expect(page.url()).toContain(`/ui/exports?workspace_id=${acme.id}`);

      // The slow knob holds each step of the run a minute of the emulator clock.
      const knobs = page.getByRole('form', { name: 'Fail or slow the next export runs' });
      await knobs.getByLabel('Mode').selectOption('slow');
      await knobs.getByRole('button', { name: 'Arm' }).click();
      await page.getByText('export runs wait 60 s (emulator clock) before each file').waitFor();
      await screenshot(page, 'exports');
      await checkAccessibility(page);

      await page.getByLabel('Tracing project').selectOption({ label: 'support-bot-staging' });
      await Promise.all([
        page.waitForURL(/\/ui\/exports\/[0-9a-f-]{36}\?workspace_id=/),
        page.getByRole('button', { name: 'Create export' }).click(),
      ]);
      await showsText(page, 'Created');
      const exportId = new URL(page.url()).pathname.split('/').pop()!;
      expect(await page.getByRole('link', { name: 'Query its files in SQL' }).getAttribute('href')).toBe(
        `/ui/sql?export_id=${exportId}`,
      );

      await advance(0);
      await page.locator('#export-live [role="status"]').getByText('Running').waitFor();
      expect(await page.locator('#export-live').textContent()).toContain('0 of 1');
      await screenshot(page, 'export-running');

      // Two steps of a minute each: the file, then the run's end (which records the file's rows).
      await advance(120);
      await page.locator('#export-live [role="status"]').getByText('Completed').waitFor();
      expect(await page.locator('#export-live').textContent()).toContain('1 of 1');

      const runs = (await ctx.api.as(acme).get(`/api/v1/bulk-exports/${exportId}/runs`)).body as {
        metadata: { result: { exported_files: string[] } };
      }[];
      const files = runs.flatMap((run) => run.metadata.result.exported_files);
      expect(files.length).toBeGreaterThan(0);
      const links = page.locator('ul.files a');
      expect(await links.count()).toBe(files.length);
      for (const [index, file] of files.entries()) {
        const [bucket, ...key] = file.split('/');
        expect(await links.nth(index).getAttribute('href')).toBe(
          `/ui/objects/${bucket}/object?key=${encodeURIComponent(key.join('/'))}`,
        );
      }
      // Polling has stopped: the live part carries no trigger any more.
      expect(await page.locator('#export-live').getAttribute('hx-trigger')).toBeNull();
      await screenshot(page, 'export-completed');
      await checkAccessibility(page);

      // Back from a file, the page is the whole page, not the last fragment its polling fetched at the same URL.
      await Promise.all([page.waitForURL(/\/ui\/objects\//), links.first().click()]);
      await page.goBack();
      await page.getByRole('navigation', { name: 'Views' }).waitFor();
      expect(await page.title()).toBe(`Export ${exportId} · localplane`);
      expect(browser.pageErrors).toEqual([]);
    },
  );

  it("shows the API's refusal next to the export form", async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const created = await ctx.api.as(acme).post('/api/v1/bulk-exports/destinations', {
      display_name: 'refusals',
      config: { bucket_name: ctx.fixtures.objstore.buckets[0], prefix: 'refusals' },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    });
    expect(created.status, created.text).toBe(200);
    const page = await browser.openDashboard(ctx.instance, `/ui/exports?workspace_id=${acme.id}`);
    await page.getByLabel('End (UTC; blank for a recurring export)').fill('');
    await page.getByRole('button', { name: 'Create export' }).click();
    const alert = page.getByRole('form', { name: 'New export' }).getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'Exactly one of end_time (one-time export) or interval_hours (recurring export) must be set',
    );
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });
});
