/**
 * The dashboard's actions of issue 38 point 1 in Chromium, as a person uses them: a deployment created and deleted
 * from the forms, an OAuth provider and a listener from their tabs, the clock run until idle, a limit and a plan
 * changed; each checked through the API; the new pages at 390x844 never wider than the screen; screenshots at
 * 1440x900 and 390x844, and axe-core's check.
 */
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const admin = (method: string, path: string, body?: unknown) =>
  ctx.admin.request(method, path, body === undefined ? {} : { body });

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const LONG_NAME = `long-${'n'.repeat(95)}`;
const SECRET = 'sk-browser-actions-never-shown';

beforeEach(async () => {
  await admin('POST', '/reset');
  await admin('POST', '/clock/freeze');
});

/** The page's width beyond the screen's, in CSS pixels (0: it does not scroll sideways). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Confirms every confirm() the page asks (the delete buttons ask first). */
const acceptDialogs = (page: Page) => page.on('dialog', (dialog) => void dialog.accept());

describe('deployment actions in Chromium', () => {
  it('creates a deployment from the list form and deletes it from its page', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments?workspace_id=${acme().id}`, {
      viewport: DESKTOP,
    });
    acceptDialogs(page);
    await page.getByText('New deployment').click();
    const form = page.locator('#deployment-create form');
    await form.getByLabel('Name').fill('browser-created');
    await form.getByLabel('Codehost integration').selectOption({ index: 1 });
    await form.getByLabel('Repository URL').fill(acme().integrations[0]!.repos[0]!.url);
    await form.getByLabel('Deployment type').selectOption('dev');
    await form.getByLabel('Repository ref').fill(acme().integrations[0]!.repos[0]!.default_branch);
    await form.getByLabel('Graph config path').fill('graph.json');
    await form.getByLabel('Secrets').fill(`OPENAI_API_KEY=${SECRET}`);
    await screenshot(page, 'deployments-create-1440');
    await form.getByRole('button', { name: 'Create deployment' }).click();
    await page.waitForURL(/\/ui\/deployments\/[0-9a-f-]{36}\?workspace_id=/);
    expect(await page.title()).toBe('browser-created · localplane');
    const id = new URL(page.url()).pathname.split('/').at(-1)!;
    const created = await ctx.api.as(acme()).get(`/v2/deployments/${id}`);
    expect(created.body).toMatchObject({ name: 'browser-created', secrets: [{ name: 'OPENAI_API_KEY' }] });
    expect(await page.content()).not.toContain(SECRET);
    await checkAccessibility(page);

    await page.getByRole('button', { name: 'Delete browser-created' }).click();
    await page.waitForURL(`**/ui/deployments?workspace_id=${acme().id}`);
    expect((await ctx.api.as(acme()).get(`/v2/deployments/${id}`)).status).toBe(404);
    expect(browser.pageErrors).toEqual([]);
  });

  it('creates and deletes an OAuth provider, and shows the refusal of a second of the same id', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments/providers?workspace_id=${acme().id}`, {
      viewport: DESKTOP,
    });
    acceptDialogs(page);
    const form = page.locator('form[data-route="POST /v2/auth/providers"]');
    const fill = async () => {
      await form.getByLabel('Provider id').fill('browser-oauth');
      await form.getByLabel('Name', { exact: true }).fill('Browser OAuth');
      await form.getByLabel('Client id').fill('browser-client');
      await form.getByLabel('Client secret (write-only)').fill(SECRET);
      await form.getByLabel('Auth URL').fill('https://auth.example/authorize');
      await form.getByLabel('Token URL').fill('https://auth.example/token');
      await form.getByRole('button', { name: 'Create provider' }).click();
    };
    await fill();
    await page.getByText('Created the OAuth provider browser-oauth.').waitFor();
    const providers = async () =>
      ((await ctx.api.as(acme()).get('/v2/auth/providers')).body as { provider_id: string }[]).map(
        (provider) => provider.provider_id,
      );
    expect(await providers()).toContain('browser-oauth');
    await fill();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/browser-oauth/);
    expect(await page.content()).not.toContain(SECRET);
    await screenshot(page, 'deployments-providers-1440');
    await checkAccessibility(page);
    await page.getByRole('button', { name: 'Delete browser-oauth' }).click();
    await page.getByText('Deleted the OAuth provider browser-oauth.').waitFor();
    expect(await providers()).not.toContain('browser-oauth');
  });

  it('creates a listener of a self-hosted workspace', async () => {
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments/listeners?workspace_id=${globex().id}`, {
      viewport: DESKTOP,
    });
    await page.getByLabel('Compute id').fill('browser-cluster');
    await page.locator('form[data-route="POST /v2/listeners"]').getByLabel('Namespaces (comma-separated)').fill('ns');
    await page.getByRole('button', { name: 'Create listener' }).click();
    await page.getByText('Created the listener browser-cluster.').waitFor();
    const listeners = (await ctx.api.as(globex()).get('/v2/listeners')).body as {
      resources: { compute_id: string }[];
    };
    expect(listeners.resources.map((listener) => listener.compute_id)).toContain('browser-cluster');
    await screenshot(page, 'deployments-listeners-1440');
    await checkAccessibility(page);
  });
});

describe('clock and state actions in Chromium', () => {
  it('runs the clock until idle and names the tasks that ran', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/clock', { viewport: DESKTOP });
    await page.getByRole('button', { name: 'Run until idle' }).click();
    const ran = page.getByRole('list', { name: 'The tasks that ran, in order' });
    await ran.waitFor();
    expect(await ran.locator('li').count()).toBeGreaterThan(0);
    expect((await admin('GET', '/tasks')).body).toEqual([]);
    await page.getByText('Nothing is scheduled.').waitFor();
    await screenshot(page, 'clock-run-until-idle-1440');
    await checkAccessibility(page);
  });

  it('changes a limit and a plan from the State view, and shows a refused limit', async () => {
    const page = await browser.openDashboard(ctx.instance, '/ui/state', { viewport: DESKTOP });
    acceptDialogs(page);
    await page.getByLabel('export_rows_per_file').fill('777');
    await page.getByRole('button', { name: 'Change limits' }).click();
    await page.getByText('Changed export_rows_per_file.').waitFor();
    expect((await admin('GET', '/config')).body).toMatchObject({ export_rows_per_file: 777 });
    await page.getByLabel('sql_row_limit').fill('0');
    await page.getByRole('button', { name: 'Change limits' }).click();
    // The refusal at the field: marked, the message beside it, the focus on it.
    await expect.poll(() => page.getByLabel('sql_row_limit').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#invalid-sql_row_limit-error').textContent()).toMatch(/greater than or equal to 1/);
    expect(await page.getByLabel('sql_row_limit').evaluate((field) => field === document.activeElement)).toBe(true);

    const developer = workspaceByTier(ctx.fixtures, 'developer');
    await page.getByLabel(`Plan of ${developer.name}`).selectOption('enterprise');
    await page
      .locator('form[data-route="PUT /_localplane/workspaces/:workspace_id/tier"]', {
        has: page.getByLabel(`Plan of ${developer.name}`),
      })
      .getByRole('button', { name: 'Change plan' })
      .click();
    await page.getByText(`Workspace ${developer.name} is on the enterprise plan.`).waitFor();
    const state = (await admin('GET', `/state?workspace_id=${developer.id}`)).body as {
      workspaces: { tier: string }[];
    };
    expect(state.workspaces[0]!.tier).toBe('enterprise');
    await screenshot(page, 'state-limits-1440');
    await checkAccessibility(page);
  });
});

describe('the new pages on a phone', () => {
  it('do not scroll sideways at 390 px (the new tabs and State), with a 100-character deployment name', async () => {
    const created = await ctx.api.as(acme()).post('/v2/deployments', codehostDeploymentBody(acme(), LONG_NAME));
    expect(created.status, created.text).toBe(201);
    const id = (created.body as { id: string }).id;
    // The list, a deployment's page and the Clock view are laid out for phones by another part of issue 38 (point 4):
    // photographed here, measured there.
    const pages: [string, string, boolean][] = [
      ['deployments-list', `/ui/deployments?workspace_id=${acme().id}`, false],
      ['deployment-long-name', `/ui/deployments/${id}?workspace_id=${acme().id}`, false],
      ['deployments-providers', `/ui/deployments/providers?workspace_id=${acme().id}`, true],
      ['deployments-listeners', `/ui/deployments/listeners?workspace_id=${globex().id}`, true],
      ['deployments-integrations', `/ui/deployments/integrations?workspace_id=${acme().id}`, true],
      ['clock', '/ui/clock', false],
      ['state', '/ui/state', true],
    ];
    const wide: string[] = [];
    for (const [name, path, measured] of pages) {
      const page = await browser.openDashboard(ctx.instance, path, { viewport: PHONE });
      const beyond = await overflow(page);
      if (measured && beyond > 0) wide.push(`${path}: ${beyond} px`);
      await screenshot(page, `${name}-390`);
      await page.close();
    }
    expect(wide).toEqual([]);
  });
});
