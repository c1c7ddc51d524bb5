/**
 * Times in Chromium, in a browser whose zone is not UTC (Asia/Kolkata, +05:30 all year): every time reads
 * `YYYY-MM-DD HH:MM:SS UTC` (24-hour) by default with the browser's zone on hover; the header's toggle writes them,
 * and the charts' axes and legends, in the browser's zone, on every page after; with a frozen clock each request
 * shows its wall time beside the emulator's.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const KOLKATA = { timezoneId: 'Asia/Kolkata' };

beforeAll(async () => {
  const set = await ctx.admin.request('POST', '/clock/set', { body: { time: '2026-10-05T09:00:00Z' } });
  expect(set.status, set.text).toBe(200);
  const acme = ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  for (const _ of [1, 2]) expect((await acme.get('/v2/deployments?limit=1')).status).toBe(200);
});

/** The x value the overview's chart shows in its legend with the cursor in the middle of the plot. */
const chartLegendAtMiddle = (page: Page) =>
  page.locator('#activity figure[data-drawn]').evaluate((figure) => {
    const chart = (
      figure as HTMLElement & {
        uplot: { bbox: { width: number }; setCursor(position: { left: number; top: number }): void };
      }
    ).uplot;
    chart.setCursor({ left: chart.bbox.width / devicePixelRatio / 2, top: 10 });
    return figure.querySelector('.u-legend .u-series:first-child .u-value')!.textContent;
  });

describe('times in the dashboard', () => {
  it('shows emulator and wall time both where the frozen clock makes them differ: each request its own', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/requests?source=api&limit=2', KOLKATA);
    const times = await page.locator('table.requests tbody tr td:first-child').allTextContents();
    expect(times).toHaveLength(2);
    for (const time of times)
      expect(time).toMatch(/^emulator 2026-10-05 09:00:00\.000 UTC · wall \d\d:\d\d:\d\d\.\d{3}$/);
    expect(new Set(times).size, 'two requests, two wall times').toBe(2);
  });

  it("writes times in UTC, the browser's zone on hover, and in the browser's zone after the header's toggle, charts too", async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/clock', KOLKATA);
    const now = page.locator('#clock-state time');
    expect(await now.getAttribute('datetime')).toBe('2026-10-05T09:00:00.000Z');
    expect(await now.textContent()).toBe('2026-10-05 09:00:00.000 UTC');
    expect(await now.getAttribute('title'), 'written when pointed at').toBeNull();
    await now.hover();
    expect(await now.getAttribute('title')).toBe('2026-10-05 14:30:00.000 GMT+5:30');

    await page.getByRole('button', { name: 'Times: UTC' }).click();
    await page.getByRole('button', { name: 'Times: local' }).waitFor();
    expect(await now.textContent()).toBe('2026-10-05 14:30:00.000 GMT+5:30');
    await now.hover();
    expect(await now.getAttribute('title')).toBe('2026-10-05 09:00:00.000 UTC');

    // The browser keeps the choice: the next page is in the browser's zone, its chart too (24-hour).
    await page.goto(new URL('/ui', ctx.instance.apiUrl).href);
    expect(await page.locator('.card time').textContent()).toBe('2026-10-05 14:30:00 GMT+5:30');
    // The chart counts requests by the wall clock's minutes (the frozen emulator clock would put them all in one).
    const local = await chartLegendAtMiddle(page);
    expect(local).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:00$/);
    await screenshot(page, 'overview-local-times');

    await page.getByRole('button', { name: 'Times: local' }).click();
    expect(await page.locator('.card time').textContent()).toBe('2026-10-05 09:00:00 UTC');
    const utc = await chartLegendAtMiddle(page);
    expect(Date.parse(`${local!.replace(' ', 'T')}+05:30`)).toBe(Date.parse(`${utc!.replace(' ', 'T')}Z`));
    expect(browser.pageErrors).toEqual([]);
  });
});
