/**
 * The /docs page (Swagger UI) in Chromium, as a person tries the API from it: an operation run
 * without credentials is refused, and after Authorize with a fixture workspace's API key and
 * tenant id the same "Try it out" answers 200; the page opened again keeps the authorization.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot, useBrowser } from '../support/browser.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

/** GET /v2/deployments's block, by the id Swagger UI gives it (tag and operationId). */
const listDeployments = (page: Page) => page.locator('#operations-deployments-getV2Deployments');

/**
 * Clicks Execute on the operation's open "Try it out" and answers the request the page sent and the status it shows.
 */
async function execute(page: Page) {
  const operation = listDeployments(page);
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => new URL(candidate.url()).pathname === '/v2/deployments'),
    operation.getByRole('button', { name: 'Execute' }).click(),
  ]);
  const shown = operation.locator('.live-responses-table tbody td.response-col_status');
  await shown.waitFor();
  return {
    sent: await response.request().allHeaders(),
    shown: (await shown.textContent())?.trim(),
    body: operation.locator('.live-responses-table tbody td.response-col_description'),
  };
}

async function tryItOut(page: Page) {
  await listDeployments(page).locator('.opblock-summary-control').click();
  await listDeployments(page).getByRole('button', { name: 'Try it out' }).click();
}

/** Fills in one scheme of the Authorize dialog (each is a form of its own) and applies it. */
async function authorize(page: Page, header: string, value: string) {
  const form = page.locator('.dialog-ux .auth-container').filter({ has: page.locator('code', { hasText: header }) });
  await form.getByRole('textbox').fill(value);
  await form.getByRole('button', { name: 'Apply credentials' }).click();
  await form.getByRole('heading', { name: 'Authorized' }).waitFor();
}

describe('Try it out on /docs in Chromium', () => {
  it(
    'is 401 without credentials, and 200 for the workspace after Authorize with its API key and tenant id, which ' +
      'the page keeps',
    async () => {
      const workspace = workspaceByTier(ctx.fixtures, 'plus');
      const page = await browser.openDashboard(ctx.instance, '/docs');

      await tryItOut(page);
      const anonymous = await execute(page);
      expect(anonymous.shown).toBe('401');
      expect(anonymous.sent).not.toHaveProperty('x-api-key');
      await listDeployments(page).getByRole('button', { name: 'Clear' }).click();

      await page.locator('.auth-wrapper').getByRole('button', { name: 'Authorize' }).click();
      await authorize(page, 'X-API-Key', workspace.api_key);
      await authorize(page, 'X-Tenant-Id', workspace.id);
      await page.locator('.dialog-ux').getByRole('button', { name: 'Close' }).first().click();

      const authorized = await execute(page);
      expect(authorized.shown).toBe('200');
      expect(authorized.sent).toMatchObject({ 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id });
      expect(await authorized.body.textContent()).toContain(workspace.deployments[0]!.name);
      await screenshot(page, 'docs-try-it-out', listDeployments(page));

      // persistAuthorization: the page opened again keeps what Authorize was given (not reloaded: the address now opens
      // the operation).
      await page.goto(new URL('/docs', ctx.instance.apiUrl).href);
      await tryItOut(page);
      expect((await execute(page)).shown).toBe('200');
      // Chromium logs the refused call of the first run, and nothing else went wrong.
      expect(browser.pageErrors).toEqual([expect.stringMatching(/status of 401 \(Unauthorized\)/)]);
      // Swagger UI renders the whole document three times: 10-30 s on two busy cores.
    },
    120_000,
  );
});
