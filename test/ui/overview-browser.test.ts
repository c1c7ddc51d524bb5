/**
 * The overview and the layout every view shares, in Chromium: what the page shows, the themes
 * (following the system, and the toggle that overrides it and is remembered), the navigation by
 * keyboard alone with visible focus, screenshots and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync } from 'node:fs';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane } from '../support/instance.ts';
import {
  addReadmeActivity,
  README_CLOCK,
  README_PICTURE,
  README_SCREENSHOT,
  README_SEED,
  README_TEST_NAME,
  UPDATE_README_PICTURE,
} from './support/readme-picture.ts';
import { timestampText } from './support/time.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

const LIGHT_BACKGROUND = 'rgb(255, 255, 255)';
const DARK_BACKGROUND = 'rgb(21, 23, 26)';

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (file: string) => {
  const bytes = readFileSync(file);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
};

const backgroundOf = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const themeToggle = (page: Page) => page.getByRole('button', { name: /^Theme: / });

/** The focused element: its name, and whether a focus ring (outline or box-shadow) is drawn around it. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement;
    const style = getComputedStyle(element);
    const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    return { text: element.textContent?.trim() ?? '', id: element.id, ring: outlined || style.boxShadow !== 'none' };
  });

describe('the overview at /ui in Chromium', () => {
  it('shows health, the clock and every fixture workspace, and axe-core finds no serious violation', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui');
    expect(await page.title()).toBe('Overview · localplane');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Overview');
    const { now } = (await ctx.admin.request<{ now: string }>('GET', '/clock')).body;
    expect(await page.locator('main').textContent()).toContain(timestampText(now));
    const rows = page.getByRole('table', { name: 'Workspaces' }).locator('tbody tr');
    expect(await rows.count()).toBe(ctx.fixtures.workspaces.length);
    for (const workspace of ctx.fixtures.workspaces)
      expect(await page.getByRole('rowheader', { name: workspace.name, exact: true }).count()).toBe(1);
    await screenshot(page, 'overview');
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });

  it('follows the system theme, light or dark, and passes the accessibility check in both', async () => {
    const light = await browser.openDashboard(ctx.instance, '/ui', { colorScheme: 'light' });
    expect(await backgroundOf(light)).toBe(LIGHT_BACKGROUND);
    const dark = await browser.openDashboard(ctx.instance, '/ui', { colorScheme: 'dark' });
    expect(await backgroundOf(dark)).toBe(DARK_BACKGROUND);
    expect(await themeToggle(dark).textContent()).toBe('Theme: system');
    await screenshot(dark, 'overview-dark');
    await checkAccessibility(dark);
  });

  it('the toggle cycles system, light and dark over the system theme, and the choice outlives a reload', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui', { colorScheme: 'dark' });
    await themeToggle(page).click();
    expect(await themeToggle(page).textContent()).toBe('Theme: light');
    expect(await backgroundOf(page)).toBe(LIGHT_BACKGROUND);
    await page.reload();
    expect(await themeToggle(page).textContent()).toBe('Theme: light');
    expect(await backgroundOf(page)).toBe(LIGHT_BACKGROUND);
    await themeToggle(page).click();
    expect(await backgroundOf(page)).toBe(DARK_BACKGROUND);
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await backgroundOf(page), 'dark as chosen, though the system turned light').toBe(DARK_BACKGROUND);
    await themeToggle(page).click();
    expect(await themeToggle(page).textContent()).toBe('Theme: system');
    expect(await backgroundOf(page), 'the system again').toBe(LIGHT_BACKGROUND);
    expect(browser.pageErrors).toEqual([]);
  });

  it(
    'is usable by keyboard alone: a skip link, every view in the navigation, the theme toggle, each with a ' +
      'visible focus ring',
    async () => {
      const page = await browser.openDashboard(ctx.instance, '/ui');
      const order: string[] = [];
      const expected = [
        'Skip to content',
        'localplane',
        'Overview',
        'Requests',
        'Exports',
        'Objects',
        'SQL',
        'Deployments',
        'Clock',
        'Faults',
        'State',
        'Times: UTC',
        'Theme: system',
      ];
      for (let step = 0; step < expected.length; step++) {
        await page.keyboard.press('Tab');
        const { text, ring } = await focused(page);
        order.push(text);
        expect(ring, `a focus ring around "${text}"`).toBe(true);
      }
      expect(order).toEqual(expected);
      await page.keyboard.press('Enter');
      expect(await themeToggle(page).textContent(), 'Enter on the toggle').toBe('Theme: light');
      await screenshot(page, 'overview-keyboard-focus');

      for (const _ of ['Times: UTC', 'State', 'Faults']) await page.keyboard.press('Shift+Tab');
      expect((await focused(page)).text).toBe('Faults');
      await Promise.all([page.waitForURL('**/ui/faults'), page.keyboard.press('Enter')]);

      const skip = await browser.openDashboard(ctx.instance, '/ui');
      await skip.keyboard.press('Tab');
      const box = await skip.getByRole('link', { name: 'Skip to content' }).boundingBox();
      expect(box && box.x >= 0 && box.y >= 0, 'the skip link comes into view when focused').toBe(true);
      await skip.keyboard.press('Enter');
      expect((await focused(skip)).id, 'Enter on the skip link moves focus to the content').toBe('main');
    },
  );
});

describe("the README's picture", () => {
  const scene = useLocalplane({ seed: README_SEED, freezeClock: true });

  it(README_TEST_NAME, async () => {
    await addReadmeActivity(scene);
    const page = await browser.openDashboard(scene.instance, '/ui');
    await page.waitForLoadState('networkidle');
    const main = page.locator('main');
    const advanced = new Date(Date.parse(README_CLOCK) + 60_000).toISOString();
    expect(await main.textContent(), "the clock a minute past the scene's time").toContain(timestampText(advanced));
    const exportsOfWorkspace = page.getByRole('table', { name: 'Workspaces' }).locator('tbody tr').getByRole('link');
    expect(await exportsOfWorkspace.allTextContents(), 'one export, in one workspace').toContain('1');
    const file = await screenshot(page, README_SCREENSHOT);
    expect(browser.pageErrors).toEqual([]);
    if (process.env[UPDATE_README_PICTURE]) copyFileSync(file, README_PICTURE);
    expect(pngSize(file), "the committed README picture has this scene's size: run npm run screenshot:readme").toEqual(
      pngSize(README_PICTURE),
    );
  });
});
