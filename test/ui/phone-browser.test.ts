/**
 * Every view of the dashboard, and every kind of sub-page, in Chromium on a phone (390x844) and a desktop (1440x900),
 * light and dark, with the long names a test makes (a 190-character object key without a break point, a
 * 100-character deployment name): the page never scrolls sideways, every button is on screen, axe-core finds no
 * serious or critical violation; a screenshot of each as test-results/screenshots/<view>-<width>-<theme>.png.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/journal/schemas.ts';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { exportClient } from '../support/exports.ts';
import { fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const plus = () => workspaceByTier(ctx.fixtures, 'plus');
const exports = exportClient(ctx, plus);

const LONG_KEY = `phone-${'k'.repeat(184)}`;
const LONG_NAME = `phone-${'n'.repeat(94)}`;

interface View {
  name: string;
  path: string;
  /** What a person does on the page before it is looked at (runs the SQL query). */
  prepare?: (page: Page) => Promise<void>;
}

let views: View[];

beforeAll(async () => {
  expect([LONG_KEY.length, LONG_NAME.length]).toEqual([190, 100]);
  const bucket = ctx.fixtures.objstore.buckets[0]!;
  await s3For(ctx.fixtures.objstore.endpoint_url, fullKey(ctx.fixtures)).send(
    new PutObjectCommand({ Bucket: bucket, Key: LONG_KEY, Body: '{"long": "key"}', ContentType: 'application/json' }),
  );
  const created = await ctx.api.as(plus()).post('/v2/deployments', codehostDeploymentBody(plus(), LONG_NAME));
  expect(created.status, created.text).toBe(201);
  const deploymentId = (created.body as { id: string }).id;
  const rule = await ctx.admin.request('POST', '/fault-rules', {
    body: {
      match: { method: 'GET', path: '/v2/deployments/never/**' },
      action: { status: 503, detail: 'a rule whose Delete button must be on screen' },
    },
  });
  expect(rule.status, rule.text).toBe(201);

  const session = plus().sessions.find((candidate) => candidate.run_count < 50_000)!;
  const start = Date.parse(session.first_run_start_time);
  const exportId = await exports.startExport(await exports.createDestination('phone'), session.name, {
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 3_600_000).toISOString(),
  });
  await ctx.instance.clock.advance(0);
  await ctx.instance.clock.settle();
  expect((await exports.getExport(exportId)).status).toBe('Completed');

  const { requests } = (
    await ctx.admin.request<{ requests: JournalEntry[] }>('GET', '/requests?source=objstore&method=PUT')
  ).body;
  const put = requests.find((entry) => entry.path.endsWith(LONG_KEY))!;
  const workspace = `workspace_id=${plus().id}`;
  views = [
    { name: 'overview', path: '/ui' },
    { name: 'requests', path: '/ui/requests' },
    { name: 'request', path: `/ui/requests/${put.id}` },
    { name: 'exports', path: `/ui/exports?${workspace}` },
    { name: 'export', path: `/ui/exports/${exportId}?${workspace}` },
    { name: 'objects', path: '/ui/objects' },
    { name: 'bucket', path: `/ui/objects/${bucket}` },
    { name: 'object', path: `/ui/objects/${bucket}/object?key=${encodeURIComponent(LONG_KEY)}` },
    {
      name: 'sql',
      path: `/ui/sql?export_id=${exportId}`,
      prepare: async (page) => {
        await page.getByRole('button', { name: 'Run query' }).click();
        await page.getByRole('table', { name: 'Result' }).waitFor();
      },
    },
    { name: 'deployments', path: `/ui/deployments?${workspace}` },
    { name: 'deployment', path: `/ui/deployments/${deploymentId}?${workspace}` },
    { name: 'clock', path: '/ui/clock' },
    { name: 'faults', path: '/ui/faults' },
    { name: 'state', path: '/ui/state' },
    { name: 'error', path: '/ui/deployments/00000000-0000-4000-8000-000000000000' },
  ];
});

/** The buttons (and links drawn as buttons) the page shows that lie, even in part, left or right of the viewport. */
const buttonsOffScreen = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('button, a.button, input[type="submit"]')]
      .filter((element) => element.checkVisibility())
      .filter((element) => {
        const box = element.getBoundingClientRect();
        return box.left < 0 || box.right > window.innerWidth + 0.5;
      })
      .map((element) => (element.textContent ?? '').trim() || element.outerHTML.slice(0, 80)),
  );

const SIZES = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
];

describe('every view at a phone and a desktop size, light and dark', () => {
  for (const viewport of SIZES)
    for (const theme of ['light', 'dark'] as const)
      it(
        `${viewport.width}x${viewport.height} ${theme}: no sideways scrolling, every button on screen, ` +
          'no serious axe-core violation',
        {
          timeout: 300_000,
        },
        async () => {
          const page = await browser.newPage({ viewport, colorScheme: theme });
          const problems: string[] = [];
          for (const view of views) {
            const response = await page.goto(new URL(view.path, ctx.instance.apiUrl).href);
            expect(response?.status(), view.path).toBe(view.name === 'error' ? 404 : 200);
            await view.prepare?.(page);
            const { scrollWidth, innerWidth } = await page.evaluate(() => ({
              scrollWidth: document.documentElement.scrollWidth,
              innerWidth: window.innerWidth,
            }));
            if (scrollWidth > innerWidth) problems.push(`${view.name}: ${scrollWidth} px wide in ${innerWidth}`);
            const offScreen = await buttonsOffScreen(page);
            if (offScreen.length > 0) problems.push(`${view.name}: buttons off screen: ${offScreen.join(', ')}`);
            try {
              await checkAccessibility(page);
            } catch (error) {
              problems.push(`${view.name}: ${(error as Error).message}`);
            }
            await screenshot(page, `${view.name}-${viewport.width}-${theme}`);
          }
          expect(problems).toEqual([]);
          expect(browser.pageErrors.filter((error) => !error.includes('404'))).toEqual([]);
        },
      );
});

describe('the error page', () => {
  it('marks no view as the current one in the navigation', async () => {
    const page = await browser.newPage();
    const response = await page.goto(
      new URL('/ui/deployments/00000000-0000-4000-8000-000000000000', ctx.instance.apiUrl).href,
    );
    expect(response?.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Error');
    expect(await page.getByRole('navigation', { name: 'Views' }).locator('[aria-current]').count()).toBe(0);
  });
});
