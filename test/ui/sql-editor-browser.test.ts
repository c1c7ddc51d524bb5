/**
 * The SQL view's editor in Chromium: Ctrl+Enter runs the query, the Run button is disabled and Cancel shown while it
 * runs, Cancel drops the run, the schema beside the editor puts a column's name in the query, the history keeps the
 * queries run (across a reload), and a result of categories is charted as bars by category.
 */
import type { Page, Route } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { exportClient, harness } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const plus = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const { admin, advance } = harness(ctx);

let exportId: string;

beforeAll(async () => {
  await admin('POST', '/clock/set', { time: '2026-11-01T00:00:00Z' });
  exportId = await plus.startExport(await plus.createDestination('sql-editor'), 'support-bot-staging', {
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-02T00:00:00Z',
  });
  await advance(0);
});

const queryBox = (page: Page) => page.getByRole('textbox', { name: /^SQL over the view runs/ });
const resultRows = (page: Page) => page.getByRole('table', { name: 'Result' }).locator('tbody tr');

describe('the SQL editor in Chromium', () => {
  it('runs the query on Ctrl+Enter, disables Run and offers Cancel while it runs, and Cancel drops the run', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/sql?export_id=${exportId}`);
    const run = page.getByRole('button', { name: 'Run query' });
    const cancel = page.getByRole('button', { name: 'Cancel' });
    expect(await cancel.isVisible()).toBe(false);

    // The query's request is held until the test lets it go, so the page is seen while it runs.
    const held: Route[] = [];
    await page.route(
      (url) => url.pathname === '/ui/sql' && url.searchParams.has('sql'),
      (route) => void held.push(route),
    );
    await queryBox(page).fill('SELECT count(*) AS runs FROM runs');
    await queryBox(page).press('Control+Enter');
    await expect.poll(() => held.length).toBe(1);
    expect(await page.locator('button.run-query').isDisabled()).toBe(true);
    expect(await cancel.isVisible()).toBe(true);
    await cancel.click();
    await page.locator('button.run-query:enabled').waitFor();
    expect(await cancel.isVisible()).toBe(false);
    expect(await resultRows(page).count(), 'a cancelled run shows no result').toBe(0);
    await held[0]!.abort().catch(() => {});

    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await queryBox(page).press('Control+Enter');
    await resultRows(page).first().waitFor();
    expect(await resultRows(page).count()).toBe(1);
    expect(await run.isEnabled()).toBe(true);
  });

  it("puts a column's name from the schema into the query, and keeps the queries run as a history", async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/sql?export_id=${exportId}`);
    const schema = page.getByRole('region', { name: 'Schema' });
    expect(await schema.getByRole('button', { name: 'status' }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'History' }).count(), 'no history yet').toBe(0);

    await queryBox(page).fill('SELECT  FROM runs');
    await queryBox(page).evaluate((box: HTMLTextAreaElement) => box.setSelectionRange(7, 7));
    await schema.getByRole('button', { name: 'status' }).click();
    expect(await queryBox(page).inputValue()).toBe('SELECT status FROM runs');
    await page.getByRole('button', { name: 'Run query' }).click();
    await resultRows(page).first().waitFor();
    await queryBox(page).fill('SELECT count(*) AS runs FROM runs');
    await queryBox(page).press('Control+Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /^1 row / })
      .waitFor();

    await page.reload();
    const history = page.getByRole('region', { name: 'History' });
    expect(await history.getByRole('button').allTextContents()).toEqual([
      'SELECT count(*) AS runs FROM runs',
      'SELECT status FROM runs',
    ]);
    await history.getByRole('button', { name: 'SELECT status FROM runs' }).click();
    expect(await queryBox(page).inputValue()).toBe('SELECT status FROM runs');
    await screenshot(page, 'sql-editor-history');
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });

  it('charts a result of categories as a bar a category, not against the row number', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/sql?export_id=${exportId}`);
    await queryBox(page).fill('SELECT status, count(*) AS runs FROM runs GROUP BY status ORDER BY runs DESC');
    await page.getByRole('button', { name: 'Run query' }).click();
    await resultRows(page).first().waitFor();
    const table = await resultRows(page).evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
    );
    expect(await page.getByLabel('x axis').inputValue()).toBe('status');
    const figure = page.locator('.sql-chart figure');
    await figure.locator('.uplot canvas').first().waitFor();
    const chart = JSON.parse((await figure.getAttribute('data-chart'))!) as {
      categories: string[];
      series: { values: number[] }[];
    };
    expect(chart.categories).toEqual(table.map(([status]) => status));
    expect(chart.series[0]!.values).toEqual(table.map(([, runs]) => Number(runs)));
    expect(await figure.locator('.u-legend .u-series .u-label').allTextContents()).toEqual(['status', 'runs']);
    await screenshot(page, 'sql-bars', page.locator('.sql-chart'));
    expect(browser.pageErrors).toEqual([]);
  });
});
