/**
 * The Clock and Deployments views in Chromium, as a person uses them: advance the clock and watch
 * a revision reach DEPLOYED on its deployment's page, fail the next revision from a knob button,
 * move the clock by a typed span, filter the list; screenshots and axe-core's check of each view.
 */
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { REVISION_STEP_STATUSES } from '../../src/config.ts';
import { checkAccessibility, screenshot, useBrowser } from '../support/browser.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { exportWithStepInFlight } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';
import { startObjstoreProxy } from '../support/objstore-proxy.ts';
import { timestampText } from './support/time.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const admin = (method: string, path: string, body?: unknown) =>
  ctx.admin.request(method, path, body === undefined ? {} : { body });

beforeEach(async () => {
  await admin('POST', '/reset');
  await admin('POST', '/clock/freeze');
});

async function createDeployment(name: string) {
  const response = await ctx.api
    .as(acme())
    .post(
      '/v2/deployments',
      codehostDeploymentBody(acme(), name, { secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-browser-never-shown' }] }),
    );
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; latest_revision_id: string };
}

/** Waits until the page shows the revision in that status (the page swaps it in; no time is waited on). */
const revisionShows = (page: Page, revisionId: string, status: string) =>
  page.locator(`tr#revision-${revisionId}[data-status="${status}"]`).waitFor();

const clockNow = async (page: Page) => Date.parse((await page.locator('#clock-state time').getAttribute('datetime'))!);

describe("a deployment's page in Chromium", () => {
  it('shows a revision step through every status to DEPLOYED as the clock advances, with its timeline and logs', async () => {
    const created = await createDeployment('browser-steps');
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    expect(await page.title()).toBe('browser-steps · localplane');
    await revisionShows(page, created.latest_revision_id, 'CREATING');
    await expect(page.getByRole('cell', { name: 'Revision moves from CREATING to QUEUED' }).count()).resolves.toBe(1);
    // A person presses the page's own button, once per step.
    for (const status of [...REVISION_STEP_STATUSES.slice(1), 'DEPLOYED']) {
      await page.getByRole('button', { name: 'Advance the clock to the next step' }).click();
      await revisionShows(page, created.latest_revision_id, status);
    }
    const timeline = page.getByRole('list', { name: `Statuses of revision ${created.latest_revision_id.slice(0, 8)}` });
    expect(await timeline.locator('li').allTextContents()).toEqual([
      'CREATING +0s',
      'QUEUED +1s',
      'AWAITING_BUILD +2s',
      'BUILDING +3s',
      'AWAITING_DEPLOY +6s',
      'DEPLOYING +7s',
      'DEPLOYED +10s',
    ]);
    await expect(page.getByRole('table', { name: 'Deploy log' }).textContent()).resolves.toContain(
      `Server is healthy: revision ${created.latest_revision_id} is live.`,
    );
    await expect(page.getByText('Nothing is scheduled.').count()).resolves.toBe(1);
    expect(await page.content()).not.toContain('sk-browser-never-shown');
    await screenshot(page, 'deployment');
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });

  it('follows the clock moved from elsewhere (a test, the Clock view) while a revision is in progress', async () => {
    const created = await createDeployment('browser-follow');
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    await revisionShows(page, created.latest_revision_id, 'CREATING');
    await admin('POST', '/clock/advance', { seconds: 3 });
    await revisionShows(page, created.latest_revision_id, 'BUILDING');
    await admin('POST', '/clock/advance', { seconds: 7 });
    await revisionShows(page, created.latest_revision_id, 'DEPLOYED');
    await expect(page.locator('#deployment-live .card').first().textContent()).resolves.toContain('READY');
    expect(browser.pageErrors).toEqual([]);
  });

  it('fails the next revision at build from the knob button, each time of its long log on one line', async () => {
    const created = await createDeployment('browser-knob');
    await admin('POST', '/clock/advance', { seconds: 10 });
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    const failureLine = `npm ERR! missing script: build ${'while resolving the workspace package graph '.repeat(8)}`;
    await page.getByLabel('Failure line (optional)').fill(failureLine);
    await page.getByRole('button', { name: 'Fail at build' }).click();
    await page
      .getByText('The next revision of this deployment ends BUILD_FAILED: npm ERR! missing script: build')
      .waitFor();
    await page.getByRole('button', { name: 'New revision' }).click();
    await page.locator('tr[data-status="CREATING"]').waitFor();
    const revisionId = (await page.locator('tr[data-status="CREATING"]').getAttribute('id'))!.slice('revision-'.length);
    await admin('POST', '/clock/advance', { seconds: 60 });
    await revisionShows(page, revisionId, 'BUILD_FAILED');
    await page.getByRole('link', { name: 'logs' }).first().click();
    const buildLog = page.getByRole('table', { name: 'Build log' });
    await expect(buildLog.textContent()).resolves.toContain('npm ERR! missing script: build');
    const linesOfEachTime = await buildLog.locator('tbody td:first-child').evaluateAll((cells) =>
      cells.map((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map(({ top }) => Math.round(top))).size;
      }),
    );
    expect(linesOfEachTime.length).toBeGreaterThan(0);
    expect(linesOfEachTime, 'the lines each time of the build log takes').toEqual(linesOfEachTime.map(() => 1));
    expect(browser.pageErrors).toEqual([]);
  });
});

describe('the deployments list in Chromium', () => {
  it("filters by the API's parameters, the URL following the filter", async () => {
    await createDeployment('browser-list-alpha');
    await createDeployment('browser-list-beta');
    const page = await browser.openDashboard(ctx.instance, `/ui/deployments?workspace_id=${acme().id}`);
    await page.getByLabel('Name contains').fill('browser-list');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/name_contains=browser-list/);
    const names = page
      .getByRole('table', { name: 'Deployments of the workspace, newest first' })
      .getByRole('rowheader');
    await expect
      .poll(async () => (await names.allTextContents()).sort())
      .toEqual(['browser-list-alpha', 'browser-list-beta']);
    await screenshot(page, 'deployments');
    await checkAccessibility(page);
    const dark = await browser.openDashboard(ctx.instance, page.url().slice(ctx.instance.apiUrl.length), {
      colorScheme: 'dark',
    });
    await checkAccessibility(dark);
    expect(browser.pageErrors).toEqual([]);
  });
});

describe('the Clock view in Chromium', () => {
  it('moves the clock by a button and a typed span, says what it cannot read, and lists the due work', async () => {
    const created = await createDeployment('browser-clock');
    const page = await browser.openDashboard(ctx.instance, '/ui/clock');
    const due = page.locator('#due-work tr', { hasText: 'deployment browser-clock' });
    await expect(due.textContent()).resolves.toContain('Revision moves from CREATING to QUEUED');
    const start = await clockNow(page);

    await page.getByRole('button', { name: '+1 hour' }).click();
    await expect.poll(() => clockNow(page)).toBe(start + 3_600_000);
    await page.getByLabel('Advance by').fill('1d 3h');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await expect.poll(() => clockNow(page)).toBe(start + 3_600_000 + 97_200_000);
    // The time to set starts from now as it is after the move.
    expect(Date.parse(await page.getByLabel('Set to (ISO 8601)').inputValue())).toBe(start + 3_600_000 + 97_200_000);
    const revision = await ctx.api
      .as(acme())
      .get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`);
    expect(revision.body.status).toBe('DEPLOYED');
    await expect(due.count()).resolves.toBe(0);

    await page.getByLabel('Advance by').fill('2x');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    // The refusal is at the span's field: marked, described by the message, named in the form's summary.
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'One field needs a change:Span: Unknown unit "x" in "2x": use s, m, h or d.',
    );
    const span = page.getByLabel('Advance by');
    expect(await span.getAttribute('aria-invalid')).toBe('true');
    expect((await span.getAttribute('aria-describedby'))?.split(' ')).toContain('invalid-span-error');
    const message = page.locator('#invalid-span-error');
    expect(await message.textContent()).toBe('Unknown unit "x" in "2x": use s, m, h or d.');
    expect(await clockNow(page)).toBe(start + 3_600_000 + 97_200_000);

    await page.getByRole('button', { name: 'Unfreeze', exact: true }).click();
    await page.getByRole('button', { name: 'Freeze', exact: true }).waitFor();
    expect((await admin('GET', '/clock')).body.frozen).toBe(false);
    await page.getByRole('button', { name: 'Freeze', exact: true }).click();
    await page.getByRole('button', { name: 'Unfreeze', exact: true }).waitFor();
    await screenshot(page, 'clock');
    await checkAccessibility(page);
    expect(browser.pageErrors).toEqual([]);
  });

  it('marks the task in flight as running since its start, in both themes without a serious axe-core violation', async () => {
    const proxy = await startObjstoreProxy(ctx.instance.objstoreUrl);
    try {
      const { advancing } = await exportWithStepInFlight(ctx, acme, proxy, 'browser-running');
      const now = (await admin('GET', '/clock')).body.now as string;
      const page = await browser.openDashboard(ctx.instance, '/ui/clock');
      const running = page.locator('#due-work tr[data-state="running"]');
      await expect(running.textContent()).resolves.toContain('Export run writes its next file');
      await expect(running.getByRole('cell', { name: `running since ${timestampText(now)}` }).count()).resolves.toBe(1);
      await screenshot(page, 'clock-running-task');
      await checkAccessibility(page);
      await checkAccessibility(await browser.openDashboard(ctx.instance, '/ui/clock', { colorScheme: 'dark' }));
      proxy.release();
      await advancing;
      expect(browser.pageErrors).toEqual([]);
    } finally {
      proxy.release();
      await proxy.close();
    }
  });
});
