import { afterAll, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane } from '../support/instance.ts';

// Registered before useBrowser's, so it runs after the browser's afterAll ("after" hooks run in reverse).
afterAll(() => {
  expect(browser.remainingProcesses(), 'Chromium processes after the file').toEqual([]);
});

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

const UNLABELED_INPUT = `<!doctype html><html lang="en"><head><title>planted</title></head>
<body><main><h1>A form</h1><input type="text" name="query"></main></body></html>`;
const LABELED_INPUT = UNLABELED_INPUT.replace('<input', '<label for="query">Query</label><input id="query"');

describe('browser test support, on the API reference localplane serves at /docs', () => {
  it('opens a page of the instance in Chromium, which renders it with its scripts, and saves a screenshot', async () => {
    const page = await browser.openDashboard(ctx.instance, '/docs');
    await page.locator('.opblock').first().waitFor();
    const document = (await ctx.api.request<{ paths: Record<string, object> }>('GET', '/openapi.json')).body;
    const operations = Object.values(document.paths).reduce((sum, methods) => sum + Object.keys(methods).length, 0);
    expect(await page.locator('.opblock').count()).toBe(operations);
    const path = await screenshot(page, 'api-reference');
    expect(path).toMatch(/test-results\/screenshots\/api-reference\.png$/);
    expect(browser.pageErrors).toEqual([]);
    expect(browser.remainingProcesses().length, 'the browser and its helpers, found by their marker').toBeGreaterThan(
      1,
    );
    // Swagger UI's own markup has serious violations (contrast, controls nested in controls): the
    // accessibility check is proven on pages of the tests' own below, and run on every dashboard view.
  });

  it('fails with the URL and the answer when a page does not load', async () => {
    await expect(browser.openDashboard(ctx.instance, '/no-such-page')).rejects.toThrow(
      /GET http:\/\/127\.0\.0\.1:\d+\/no-such-page answered 404/,
    );
  });

  it('gives each test a fresh context: nothing stored by an earlier test is there', async () => {
    const first = await browser.openDashboard(ctx.instance, '/openapi.json');
    await first.evaluate(() => localStorage.setItem('left-by', 'first context'));
    const second = await browser.openDashboard(ctx.instance, '/openapi.json');
    expect(await second.evaluate(() => localStorage.getItem('left-by'))).toBeNull();
  });

  it('keeps the browser offline: a page that loads a script from another host sees the request fail', async () => {
    const page = await browser.newPage();
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>cdn</title><script ' +
        'src="https://cdn.example.com/library.js"></script></head><body></body></html>',
    );
    expect(browser.pageErrors.join('\n')).toMatch(
      /GET https:\/\/cdn\.example\.com\/library\.js failed: net::ERR_NAME_NOT_RESOLVED/,
    );
  });
});

describe('checkAccessibility', () => {
  it(
    'fails on a planted serious violation (an input without a label) with a readable list, and passes the page ' +
      'once it is fixed',
    async () => {
      const page = await browser.newPage();
      await page.setContent(UNLABELED_INPUT);
      const failure = await checkAccessibility(page).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failure).toMatch(
        new RegExp(
          String.raw`^axe-core finds 1 serious or critical violations on about:blank:\n` +
            String.raw`- label \(critical\): Form elements must have labels ` +
            String.raw`https:\/\/dequeuniversity\.com\/rules\/axe\/4\.14\/label`,
        ),
      );
      expect(failure).toContain('    input: ');
      await page.setContent(LABELED_INPUT);
      expect(await checkAccessibility(page)).toEqual([]);
    },
  );

  it('runs on a page whose Content-Security-Policy allows no inline script', async () => {
    const page = await browser.newPage();
    await page.setContent(
      UNLABELED_INPUT.replace(
        '<title>',
        `<meta http-equiv="Content-Security-Policy" content="script-src 'self'"><title>`,
      ),
    );
    await expect(checkAccessibility(page)).rejects.toThrow(/- label \(critical\)/);
  });
});
