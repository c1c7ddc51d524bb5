/**
 * The Faults view in Chromium, as a person uses it: adding a fault rule from the form and
 * watching its count go up as real API requests hit it, the API's refusal beside the form,
 * arming a knob, deleting; screenshots and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

/** The viewports the view is checked at: a laptop's and a phone's. */
const VIEWPORTS = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

/** The page's next refresh of the rules (their section polls every second), answered and swapped in. */
const nextRefresh = async (page: Page) => {
  await page.waitForResponse(
    (response) => response.request().method() === 'GET' && new URL(response.url()).pathname === '/ui/faults',
  );
  await page.waitForFunction(() => !document.querySelector('#fault-rules.htmx-request, #fault-rules.htmx-settling'));
};

/** The Fired cell of a rule's row, once the page's own refresh shows that count. */
const firedShows = (page: Page, ruleId: string, fired: number) =>
  page
    .getByRole('row', { name: new RegExp(`^${ruleId} `) })
    .locator(`td[data-fired="${fired}"]`)
    .waitFor();

describe('the Faults view in Chromium', () => {
  it('adds a fault rule from the form, and its count goes up as API requests hit it', async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const page = await browser.openDashboard(ctx.instance, '/ui/faults');
    expect(await page.title()).toBe('Faults · localplane');
    await page.getByText('No fault rules: every request is served as usual.').waitFor();

    const form = page.getByRole('form', { name: 'Add a fault rule' });
    await form.getByLabel('Source').selectOption('api');
    await form.getByLabel('Method').fill('GET');
    await form.getByLabel('Path glob').fill('/api/v1/bulk-exports/destinations');
    await form.getByLabel('Detail (error)').fill('injected from the browser');
    await form.getByRole('button', { name: 'Add rule' }).click();
    await firedShows(page, 'fault-rule-1', 0);
    expect(await form.getByLabel('Path glob').inputValue(), 'the form is empty again').toBe('');

    for (const fired of [1, 2]) {
      const faulted = await ctx.api.as(acme).get('/api/v1/bulk-exports/destinations');
      expect(faulted.status).toBe(503);
      expect(faulted.body).toEqual({ detail: 'injected from the browser' });
      await firedShows(page, 'fault-rule-1', fired);
    }
    await screenshot(page, 'faults');
    await checkAccessibility(page);

    await page.getByRole('button', { name: 'Delete fault-rule-1' }).click();
    await page.getByText('No fault rules: every request is served as usual.').waitFor();
    expect((await ctx.api.as(acme).get('/api/v1/bulk-exports/destinations')).status).toBe(200);
    expect(browser.pageErrors).toEqual([]);
  });

  it("shows the API's refusal at the field it names, and arms and disarms a knob", async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/faults');
    const form = page.getByRole('form', { name: 'Add a fault rule' });
    await form.getByLabel('Path glob').fill('/_localplane/clock');
    await form.getByRole('button', { name: 'Add rule' }).click();
    const path = form.getByLabel('Path glob');
    await form.locator('[aria-invalid="true"]').waitFor();
    expect(await path.getAttribute('aria-invalid')).toBe('true');
    expect(await path.evaluate((input) => input === document.activeElement), 'the focus is on the field').toBe(true);
    const message = await path.evaluate(
      (input) => document.getElementById(input.getAttribute('aria-describedby') ?? '')?.textContent,
    );
    expect(message).toBe(
      "The harness's own paths (/_localplane, /docs, /ui, /openapi.json) are never faulted: this rule would never fire",
    );
    expect(await form.getByRole('alert').getByRole('link').textContent()).toBe(`Match path: ${message}`);
    expect(await path.inputValue(), 'what was typed stays').toBe('/_localplane/clock');

    const knob = page.getByRole('form', { name: 'Fail or skip the next revisions' });
    await knob.getByRole('combobox', { name: /^Stage/ }).selectOption('skip');
    await knob.getByLabel('Revisions').fill('2');
    await knob.getByRole('button', { name: 'Arm' }).click();
    await page.getByRole('cell', { name: 'revisions are skipped', exact: true }).waitFor();
    expect((await ctx.admin.request<{ revisions: unknown[] }>('GET', '/faults')).body.revisions).toEqual([
      { stage: 'skip', count: 2, remaining: 2 },
    ]);
    await screenshot(page, 'faults-knobs');
    await checkAccessibility(page);

    await page.getByRole('button', { name: 'Disarm all knobs' }).click();
    await page.getByText('No knob is armed.').waitFor();
    expect((await ctx.admin.request<{ revisions: unknown[] }>('GET', '/faults')).body.revisions).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });
});

describe('a fault rule in the journal', () => {
  it(
    'added in the Faults view, fires on a real request, which the Requests view shows live with the rule, linked ' +
      'from its count',
    async () => {
      const acme = workspaceByTier(ctx.fixtures, 'plus');
      const faults = await browser.openDashboard(ctx.instance, '/ui/faults');
      const form = faults.getByRole('form', { name: 'Add a fault rule' });
      await form.getByLabel('Path glob').fill('/api/v1/bulk-exports/destinations');
      await form.getByLabel('Detail (error)').fill('seen in the journal');
      // The rule exists once the form's post is answered: the click only sends it.
      await Promise.all([
        faults.waitForResponse(
          (response) =>
            response.request().method() === 'POST' && new URL(response.url()).pathname === '/ui/faults/rules',
        ),
        form.getByRole('button', { name: 'Add rule' }).click(),
      ]);
      const { body } = await ctx.admin.request('GET', '/fault-rules');
      const ruleId = (body as { rules: { id: string }[] }).rules.at(-1)!.id;
      await firedShows(faults, ruleId, 0);

      const journal = await browser.openDashboard(ctx.instance, '/ui/requests');
      expect((await ctx.api.as(acme).get('/api/v1/bulk-exports/destinations')).status).toBe(503);
      const row = journal
        .getByRole('row')
        .filter({ hasText: '/api/v1/bulk-exports/destinations' })
        .filter({ hasText: ruleId });
      await row.first().waitFor();
      expect(await row.first().textContent()).toContain('503');

      await firedShows(faults, ruleId, 1);
      await faults.getByRole('link', { name: `1: the requests ${ruleId} fired on` }).click();
      await faults.waitForURL(new RegExp(`/ui/requests\\?fault_rule=${ruleId}$`));
      await faults.getByRole('row').filter({ hasText: ruleId }).first().waitFor();
      await screenshot(faults, 'requests-fault-rule');
      expect(browser.pageErrors).toEqual([]);
    },
  );
});

describe('debugging fault rules in the Faults view', () => {
  for (const { name, viewport } of VIEWPORTS) {
    it(`at ${viewport.width}x${viewport.height}: a rule with reply headers and a body made in the form acts as set, and the rules show their checks and near misses, linked`, async () => {
      const acme = workspaceByTier(ctx.fixtures, 'plus');
      await ctx.admin.request('DELETE', '/fault-rules');
      const page = await browser.openDashboard(ctx.instance, '/ui/faults', { viewport });
      const form = page.getByRole('form', { name: 'Add a fault rule' });
      await form.getByLabel('Method').fill('POST');
      await form.getByLabel('Path glob').fill('/api/v1/bulk-exports/destinations');
      await form.getByLabel('Status (error)').fill('429');
      await form.getByLabel('Reply headers (error; Name: value lines)').fill('Retry-After: 30\nX-Injected: browser');
      await form.getByLabel('Reply body (error, API; JSON)').fill('{"detail": "slow down"}');
      await Promise.all([
        page.waitForResponse((response) => new URL(response.url()).pathname === '/ui/faults/rules'),
        form.getByRole('button', { name: 'Add rule' }).click(),
      ]);
      const { body } = await ctx.admin.request<{ rules: { id: string }[] }>('GET', '/fault-rules');
      const ruleId = body.rules.at(-1)!.id;

      const faulted = await ctx.api.as(acme).post('/api/v1/bulk-exports/destinations', {});
      expect(faulted.status).toBe(429);
      expect(faulted.headers.get('retry-after')).toBe('30');
      expect(faulted.headers.get('x-injected')).toBe('browser');
      expect(faulted.body).toEqual({ detail: 'slow down' });
      // A request the rule misses (its method): a near miss.
      expect((await ctx.api.as(acme).get('/api/v1/bulk-exports/destinations')).status).toBe(200);
      const missed = (await ctx.admin.request<{ requests: { id: number }[] }>('GET', '/requests?order=desc&limit=1'))
        .body.requests[0]!.id;

      const row = page.getByRole('row', { name: new RegExp(`^${ruleId} `) });
      await row.locator('td[data-checked="2"]').waitFor();
      const nearMisses = page.getByRole('table', { name: 'Near misses' });
      const nearMiss = nearMisses.getByRole('row').filter({ hasText: `#${missed} GET` });
      await nearMiss.waitFor();
      expect(await nearMiss.textContent()).toContain('method: wanted POST, got GET');
      expect(await nearMiss.getByRole('link', { name: ruleId }).getAttribute('href')).toBe(`/ui/faults#${ruleId}`);
      expect(await row.textContent()).toContain('429 with Retry-After: 30, X-Injected: browser');
      await screenshot(page, `faults-near-misses-${name}`);
      await checkAccessibility(page);

      await nearMiss.getByRole('link', { name: `#${missed}` }).click();
      await page.waitForURL(new RegExp(`/ui/requests/${missed}`));
      expect(browser.pageErrors).toEqual([]);
    });
  }

  it('highlights the rule a link names by #fault-rule-N, and keeps it highlighted across refreshes', async () => {
    await ctx.admin.request('DELETE', '/fault-rules');
    for (const path of ['/one', '/two', '/three'])
      await ctx.admin.request('POST', '/fault-rules', { body: { match: { path }, action: { status: 500 } } });
    const { body } = await ctx.admin.request<{ rules: { id: string }[] }>('GET', '/fault-rules');
    const [, second, third] = body.rules.map((rule) => rule.id);
    const page = await browser.openDashboard(ctx.instance, `/ui/faults#${second}`, {
      viewport: { width: 1440, height: 900 },
    });
    const background = (id: string) =>
      page.evaluate((rowId) => getComputedStyle(document.getElementById(rowId)!).backgroundColor, id);
    const unmarked = await background(third!);
    expect(await background(second!)).not.toBe(unmarked);
    await nextRefresh(page);
    expect(await background(second!), 'still highlighted after the rules refresh').not.toBe(unmarked);
    await screenshot(page, 'faults-rule-target');
    expect(browser.pageErrors).toEqual([]);
  });

  it('refuses status 99 and probability 2 in the browser: no request reaches the server', async () => {
    await ctx.admin.request('DELETE', '/fault-rules');
    const page = await browser.openDashboard(ctx.instance, '/ui/faults');
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });
    const form = page.getByRole('form', { name: 'Add a fault rule' });
    const status = form.getByLabel('Status (error)');
    const probability = form.getByLabel('Probability');
    await form.getByLabel('Path glob').fill('/api/refused');
    await status.fill('99');
    await form.getByRole('button', { name: 'Add rule' }).click();
    expect(await status.evaluate((input: HTMLInputElement) => input.validity.rangeUnderflow)).toBe(true);
    await status.fill('503');
    await probability.fill('2');
    await form.getByRole('button', { name: 'Add rule' }).click();
    expect(await probability.evaluate((input: HTMLInputElement) => input.validity.rangeOverflow)).toBe(true);
    // Then a good value goes: the only post that reached the server is that one.
    await probability.fill('0.5');
    await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/ui/faults/rules'),
      form.getByRole('button', { name: 'Add rule' }).click(),
    ]);
    expect(posts).toEqual(['/ui/faults/rules']);
    const { body } = await ctx.admin.request<{ rules: { probability: number; action: unknown }[] }>(
      'GET',
      '/fault-rules',
    );
    expect(body.rules.map(({ probability, action }) => ({ probability, action }))).toEqual([
      { probability: 0.5, action: { status: 503 } },
    ]);
    expect(browser.pageErrors).toEqual([]);
  });
});
