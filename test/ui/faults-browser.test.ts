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

  it("shows the API's refusal beside the form, and arms and disarms a knob", async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/faults');
    const form = page.getByRole('form', { name: 'Add a fault rule' });
    await form.getByLabel('Path glob').fill('no-slash');
    await form.getByRole('button', { name: 'Add rule' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('body.match.path: Value error, A path glob starts with / (or a wildcard)');
    expect(await form.getByLabel('Path glob').inputValue(), 'what was typed stays').toBe('no-slash');

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
