/**
 * The SQL view in Chromium, as a person uses it: an export picked, the example query run, its
 * rows and its chart, another column charted, the CSV download, a query DuckDB refuses, the
 * query's URL opened again; screenshots and axe-core's check.
 */
import { describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { exportClient, harness } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const plus = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const { admin, advance } = harness(ctx);

describe('the SQL view in Chromium', () => {
  it(
    "runs a query over an export's files: its rows, a chart of one column against another, the CSV, refusals as " +
      'alerts',
    async () => {
      await admin('POST', '/clock/set', { time: '2026-11-01T00:00:00Z' });
      const exportId = await plus.startExport(await plus.createDestination('sql-browser'), 'support-bot-staging', {
        start_time: '2026-10-01T00:00:00Z',
        end_time: '2026-10-04T00:00:00Z',
      });
      await advance(0);

      const page = await browser.openDashboard(ctx.instance, `/ui/sql?export_id=${exportId}`);
      expect(await page.title()).toBe('SQL · localplane');
      expect(await page.getByRole('combobox', { name: /^Export/ }).inputValue()).toBe(exportId);
      const example = await page.getByRole('textbox', { name: /^SQL over the view runs/ }).inputValue();
      await page.getByRole('button', { name: 'Run query' }).click();

      // The result swaps in, and the address names the query.
      const rows = page.getByRole('table', { name: 'Result' }).locator('tbody tr');
      await rows.first().waitFor();
      const expected = (await ctx.admin.request('POST', '/sql', { body: { export_id: exportId, sql: example } })).body;
      expect(await rows.count()).toBe(expected.row_count);
      expect(expected.row_count).toBe(72);
      const address = new URL(page.url());
      expect([address.pathname, address.searchParams.get('export_id'), address.searchParams.get('sql')]).toEqual([
        '/ui/sql',
        exportId,
        example,
      ]);
      expect(await page.getByRole('status').textContent()).toMatch(/^72 rows in [\d.]+ ms/);

      // uPlot draws runs per hour; picking tokens for y draws those, and the address keeps the pick.
      const chart = page.locator('.sql-chart');
      await chart.locator('.uplot canvas').first().waitFor();
      expect(await chart.locator('.u-legend .u-series .u-label').allTextContents()).toEqual(['hour', 'runs']);
      await page.getByLabel('y axis').selectOption('tokens');
      expect(await chart.locator('.u-legend .u-series .u-label').allTextContents()).toEqual(['hour', 'tokens']);
      expect(await chart.locator('.uplot').count()).toBe(1);
      expect(new URL(page.url()).searchParams.get('y')).toBe('tokens');
      await screenshot(page, 'sql');
      await checkAccessibility(page);

      // The CSV download: the same rows.
      const download = page.getByRole('link', { name: 'Download CSV' });
      // Fetched from the page, as its link is followed: the CSV runs the query only for the dashboard's own pages.
      const csv = await page.evaluate(
        async (href) => (await fetch(href)).text(),
        (await download.getAttribute('href'))!,
      );
      expect(csv.split('\r\n')[0]).toBe('hour,runs,tokens');
      expect(csv.trimEnd().split('\r\n')).toHaveLength(73);

      // Opened again from its address, the page shows the query and runs it from the button (a link never runs one),
      // then draws the chart the address picks.
      const shared = await browser.openDashboard(ctx.instance, `${address.pathname}${new URL(page.url()).search}`);
      expect(await shared.getByRole('textbox', { name: /^SQL over the view runs/ }).inputValue()).toBe(example);
      expect(await shared.getByRole('table', { name: 'Result' }).count()).toBe(0);
      await shared.getByRole('button', { name: 'Run query' }).click();
      await shared.getByRole('table', { name: 'Result' }).locator('tbody tr').first().waitFor();
      expect(await shared.getByRole('table', { name: 'Result' }).locator('tbody tr').count()).toBe(72);
      await shared.locator('.sql-chart .uplot').waitFor();
      expect(await shared.locator('.sql-chart .u-legend .u-series .u-label').allTextContents()).toEqual([
        'hour',
        'tokens',
      ]);

      // A query DuckDB refuses: its first line, at the SQL field.
      await page
        .getByRole('textbox', { name: /^SQL over the view runs/ })
        .fill("SELECT * FROM read_csv('/etc/passwd')");
      await page.getByRole('button', { name: 'Run query' }).click();
      const message = page.locator('#invalid-sql-error');
      await message.waitFor();
      expect(await message.textContent()).toBe(
        'Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration',
      );
      // The SQL field is marked, described by the message, and has the focus, the query as typed.
      const query = page.getByRole('textbox', { name: /^SQL over the view runs/ });
      expect(await query.getAttribute('aria-invalid')).toBe('true');
      expect(await query.getAttribute('aria-describedby')).toContain('invalid-sql-error');
      expect(await query.evaluate((element) => element === document.activeElement)).toBe(true);
      expect(await query.inputValue()).toBe("SELECT * FROM read_csv('/etc/passwd')");
      await screenshot(page, 'sql-refused');
      await checkAccessibility(page);
      expect(browser.pageErrors).toEqual([]);
    },
  );
});
