/**
 * Every form of the dashboard in Chromium, given a bad value: the error shows at the field that holds it (the API's
 * refusal placed by the server, or the browser's refusal of a value outside the field's constraints, which then never
 * reaches the server), the field is aria-invalid and described by the message, and the focus is on it.
 */
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

/** The requests the page sends to `path` from now on. */
function requestsTo(page: Page, path: string): string[] {
  const sent: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === path) sent.push(`${request.method()} ${path}`);
  });
  return sent;
}

/** The field is marked invalid, holds the focus, and the message describing it says `message`. */
async function expectInvalidAt(field: Locator, message: RegExp) {
  await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
  expect(await field.evaluate((element) => element === document.activeElement), 'the focus is on the field').toBe(true);
  const description = await field.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );
  expect(description).toMatch(message);
}

/**
 * Fills a field with a bad value and submits its form: the browser refuses it at the field, and sends nothing; typing a
 * good value takes the mark away.
 */
async function refusedByBrowser(
  page: Page,
  field: Locator,
  { bad, good, submit, message }: { bad: string; good: string; submit: Locator; message: RegExp },
) {
  // Where the form goes: htmx's attribute, else its action.
  const action = await submit.evaluate((button: HTMLButtonElement) => {
    const form = button.form!;
    return new URL(form.getAttribute('hx-post') ?? form.getAttribute('hx-get') ?? form.action, location.href).pathname;
  });
  const sent = requestsTo(page, action);
  await field.fill(bad);
  await submit.click();
  await expectInvalidAt(field, message);
  expect(sent, `nothing reached ${action}`).toEqual([]);
  await field.fill(good);
  expect(await field.getAttribute('aria-invalid')).toBeNull();
}

describe('every form shows a bad value at its field and moves the focus there', () => {
  it('the Faults view: the rule form, the knobs (the API refusing one at its field)', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/faults', { viewport: { width: 1440, height: 900 } });
    const rule = page.getByRole('form', { name: 'Add a fault rule' });
    await refusedByBrowser(page, rule.getByLabel('Times (blank: no end)'), {
      bad: '0',
      good: '1',
      submit: rule.getByRole('button', { name: 'Add rule' }),
      message: /1/,
    });
    await refusedByBrowser(page, rule.getByLabel('Min ms (uniform)'), {
      bad: '-5',
      good: '5',
      submit: rule.getByRole('button', { name: 'Add rule' }),
      message: /0/,
    });
    const validation = page.getByRole('form', { name: 'Fail the next destination validations' });
    await refusedByBrowser(page, validation.getByLabel('Validations'), {
      bad: '0',
      good: '1',
      submit: validation.getByRole('button', { name: 'Arm' }),
      message: /1/,
    });
    const exportRuns = page.getByRole('form', { name: 'Fail or slow the next export runs' });
    await refusedByBrowser(page, exportRuns.getByLabel('Delay seconds (slow)'), {
      bad: '0',
      good: '1',
      submit: exportRuns.getByRole('button', { name: 'Arm' }),
      message: /0\.001/,
    });

    // A value only the API can judge: its refusal comes back at the field, which gets the focus after the swap.
    const revisions = page.getByRole('form', { name: 'Fail or skip the next revisions' });
    await revisions.getByLabel('Deployment id (blank: any)').fill('not-a-uuid');
    await revisions.getByRole('button', { name: 'Arm' }).click();
    const deploymentId = page
      .getByRole('form', { name: 'Fail or skip the next revisions' })
      .getByLabel('Deployment id (blank: any)');
    await expectInvalidAt(deploymentId, /UUID/i);
    const summary = page.getByRole('form', { name: 'Fail or skip the next revisions' }).getByRole('alert');
    expect(await summary.getByRole('link').textContent()).toMatch(/^Deployment id: /);
    expect(await summary.textContent()).not.toContain('body.');
    await screenshot(page, 'forms-faults-refused');
    await checkAccessibility(page);
    // The summary's link leads to the field.
    await summary.getByRole('link').click();
    expect(await page.evaluate(() => location.hash)).toBe('#invalid-deployment_id');
    expect(browser.pageErrors).toEqual([]);
  });

  it('the Exports view: a new destination, a new export', async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const created = await ctx.api.as(acme).post('/api/v1/bulk-exports/destinations', {
      display_name: 'forms',
      config: { bucket_name: ctx.fixtures.objstore.buckets[0], prefix: 'forms' },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    });
    expect(created.status, created.text).toBe(200);
    const page = await browser.openDashboard(ctx.instance, `/ui/exports?workspace_id=${acme.id}`, {
      viewport: { width: 390, height: 844 },
    });
    const destination = page.getByRole('form', { name: 'New destination' });
    await refusedByBrowser(page, destination.getByLabel('Name'), {
      bad: 'no! exclamations',
      good: 'forms two',
      submit: destination.getByRole('button', { name: 'Create destination' }),
      message: /./,
    });
    const newExport = page.getByRole('form', { name: 'New export' });
    await refusedByBrowser(page, newExport.getByLabel('Every hours (recurring)'), {
      bad: '500',
      good: '24',
      submit: newExport.getByRole('button', { name: 'Create export' }),
      message: /168/,
    });
    await screenshot(page, 'forms-exports-refused-phone');
    expect(browser.pageErrors).toEqual([]);
  });

  it('the Requests, Deployments, Clock and State views', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/requests');
    const filters = page.getByRole('form', { name: 'Filter requests' });
    await refusedByBrowser(page, filters.getByLabel('Status or class'), {
      bad: '4yy',
      good: '4xx',
      submit: filters.getByRole('button', { name: 'Filter' }),
      message: /404|4xx|format/i,
    });
    await refusedByBrowser(page, filters.getByLabel('Path glob'), {
      bad: 'no-slash',
      good: '/api/**',
      submit: filters.getByRole('button', { name: 'Filter' }),
      message: /format|starts with/,
    });

    await page.goto(`${ctx.instance.apiUrl}/ui/deployments`);
    await refusedByBrowser(page, page.getByLabel('Per page'), {
      bad: '0',
      good: '1',
      submit: page.getByRole('button', { name: 'Filter' }),
      message: /1/,
    });

    await page.goto(`${ctx.instance.apiUrl}/ui/clock`);
    await refusedByBrowser(page, page.getByLabel('Set to (ISO 8601)'), {
      bad: '',
      good: '2026-11-01T00:00:00Z',
      submit: page.getByRole('button', { name: 'Set', exact: true }),
      message: /fill/i,
    });

    await page.goto(`${ctx.instance.apiUrl}/ui/state`);
    await refusedByBrowser(page, page.getByLabel('File name'), {
      bad: '.hidden',
      good: 'fine.snapshot',
      submit: page.getByRole('button', { name: 'Save', exact: true }),
      message: /format|snapshot name/,
    });
    expect(browser.pageErrors).toEqual([]);
  });

  it("the API's refusal of a value the browser lets through comes back at its field, in every view", async () => {
    /** Submits `value` in the field: the API's words come back beside it, which is marked and has the focus. */
    async function refusedByApi(field: () => Locator, value: string, submit: Locator, message: RegExp) {
      await field().fill(value);
      await submit.click();
      await expectInvalidAt(field(), message);
    }
    /** A form whose constraints the browser does not check, as a client that reads none would send it. */
    const unchecked = (form: Locator) => form.evaluate((element: HTMLFormElement) => (element.noValidate = true));

    const page = await browser.openDashboard(ctx.instance, '/ui/clock');
    await refusedByApi(
      () => page.getByLabel('Advance by'),
      '5 fortnights',
      page.getByRole('button', { name: 'Advance', exact: true }),
      /Unknown unit "fortnights"/,
    );
    expect(await page.getByLabel('Advance by').inputValue(), 'the span stays as typed').toBe('5 fortnights');
    await screenshot(page, 'forms-clock-refused');
    // The next good span clears the mark.
    await page.getByLabel('Advance by').fill('1m');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await expect.poll(() => page.getByLabel('Advance by').getAttribute('aria-invalid')).toBeNull();
    await refusedByApi(
      () => page.getByLabel('Set to (ISO 8601)'),
      'next tuesday',
      page.getByRole('button', { name: 'Set', exact: true }),
      /datetime/i,
    );
    await refusedByApi(
      () => page.getByLabel('Within'),
      '400d',
      page.getByRole('button', { name: 'Run until idle' }),
      /within_seconds/,
    );

    await page.goto(`${ctx.instance.apiUrl}/ui/requests`);
    const filters = page.getByRole('form', { name: 'Filter requests' });
    await unchecked(filters);
    await refusedByApi(
      () => page.getByRole('form', { name: 'Filter requests' }).getByLabel('Status or class'),
      '4yy',
      filters.getByRole('button', { name: 'Filter' }),
      /pattern/,
    );
    await checkAccessibility(page);

    await page.goto(`${ctx.instance.apiUrl}/ui/state`);
    await refusedByApi(
      () => page.getByLabel('sql_row_limit'),
      '-1',
      page.getByRole('button', { name: 'Change limits' }),
      /greater than or equal to 1/,
    );
    await unchecked(page.locator('form[hx-post="/ui/state/snapshot"]'));
    await refusedByApi(
      () => page.getByLabel('File name'),
      'a/b.snapshot',
      page.getByRole('button', { name: 'Save', exact: true }),
      /plain file name/,
    );
    await screenshot(page, 'forms-state-refused');

    await page.goto(`${ctx.instance.apiUrl}/ui/objects`);
    const keyForm = page.getByRole('form', { name: 'New key pair' });
    await keyForm.getByLabel('Secret access key').fill('forms-secret');
    await refusedByApi(
      () => page.getByRole('form', { name: 'New key pair' }).getByLabel('Access key id'),
      ctx.fixtures.objstore.keys[0]!.access_key_id,
      keyForm.getByRole('button', { name: 'Add key pair' }),
      /already exists/,
    );
    expect(await page.content()).not.toContain('forms-secret');

    await page.goto(`${ctx.instance.apiUrl}/ui/deployments`);
    await page.getByText('New deployment').click();
    const create = () => page.locator('#deployment-create form');
    await refusedByApi(
      () => create().getByLabel('Name', { exact: true }),
      '   ',
      create().getByRole('button', { name: 'Create deployment' }),
      /./,
    );
    await screenshot(page, 'forms-deployments-refused');
    expect(browser.pageErrors).toEqual([]);
  });

  it("Redeploy, the deployments and requests filters, the upload: the API's refusal at the field", async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    /** Sends `value` in the field of the form the button submits; the API's words come back at the field. */
    async function refusedByApi(field: () => Locator, value: string, submit: () => Locator, message: RegExp) {
      await field().fill(value);
      await submit().click();
      await expectInvalidAt(field(), message);
    }

    // Redeploy by a revision id the deployment does not have.
    const created = await ctx.api.as(acme).post('/v2/deployments', codehostDeploymentBody(acme, 'forms-redeploy'));
    expect(created.status, created.text).toBe(201);
    const page = await browser.openDashboard(
      ctx.instance,
      `/ui/deployments/${(created.body as { id: string }).id}?workspace_id=${acme.id}`,
    );
    await refusedByApi(
      () => page.locator('#redeploy').getByLabel('Revision id'),
      '00000000-0000-4000-8000-000000000000',
      () => page.locator('#redeploy').getByRole('button', { name: 'Redeploy' }),
      /not found/i,
    );
    await screenshot(page, 'forms-redeploy-refused');

    // The deployments filter through htmx: the form comes back out of band, marked, with the focus.
    await page.goto(`${ctx.instance.apiUrl}/ui/deployments?workspace_id=${acme.id}`);
    await refusedByApi(
      () => page.getByLabel('Deployment ids'),
      'nope',
      () => page.getByRole('button', { name: 'Filter' }),
      /UUID/,
    );

    // The requests filter's response header.
    await page.goto(`${ctx.instance.apiUrl}/ui/requests`);
    const filters = () => page.getByRole('form', { name: 'Filter requests' });
    await refusedByApi(
      () => filters().getByLabel('Response header'),
      ':120',
      () => filters().getByRole('button', { name: 'Filter' }),
      /Name:value/,
    );

    // An upload whose key the API refuses.
    await page.goto(`${ctx.instance.apiUrl}/ui/objects/${ctx.fixtures.objstore.buckets[0]!}`);
    const upload = () => page.getByRole('form', { name: 'Upload' });
    await upload()
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'rows.csv', mimeType: 'text/csv', buffer: Buffer.from('id\n1\n') });
    await refusedByApi(
      () => upload().getByLabel(/^Key/),
      `forms/${'k'.repeat(1030)}`,
      () => upload().getByRole('button', { name: 'Upload' }),
      /1024 bytes/,
    );
    await screenshot(page, 'forms-upload-refused');
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });
});
