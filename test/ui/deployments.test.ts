/**
 * The Deployments view through app.request(): a workspace's deployments with the public API's
 * filters and paging, a deployment's revisions on the emulator clock with their logs and secrets'
 * names, the revision knobs as buttons; and the dashboard's own API calls, neither journaled nor
 * faulted.
 */
import { describe, expect, it } from 'vitest';

import { codehostDeploymentBody } from '../support/deployments.ts';
import { inProcessApi } from '../support/in-process.ts';
import type { FixtureWorkspace } from '../support/instance.ts';
import { useFrozenDashboard } from './support/dashboard.ts';

const dashboard = useFrozenDashboard();

const acme = (): FixtureWorkspace => dashboard.fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
const client = () => inProcessApi(dashboard.lp, acme());
const admin = () => inProcessApi(dashboard.lp);

const page = async (path: string, headers: Record<string, string> = {}) => {
  const response = await dashboard.lp.request(path, { headers });
  return { status: response.status, html: await response.text(), location: response.headers.get('location') };
};

async function post(path: string, form: Record<string, string> = {}) {
  const response = await dashboard.lp.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, html: await response.text() };
}

const unescape = (text: string) => text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
const alertOf = (html: string) => unescape(html.match(/role="alert">([^<]*)</)?.[1] ?? '');
/** The deployment names the list shows, in order. */
const listedNames = (html: string) =>
  [...html.matchAll(/<th scope="row"><a href="\/ui\/deployments\/[^"]+">([^<]+)<\/a>/g)].map(([, name]) =>
    unescape(name!),
  );

async function createDeployment(name: string, secrets: { name: string; value: string }[] = []) {
  const response = await client().post('/v2/deployments', codehostDeploymentBody(acme(), name, { secrets }));
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; latest_revision_id: string };
}

const revisionStatus = async (deploymentId: string, revisionId: string) =>
  (await client().get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body.status as string;

describe('the deployments list', () => {
  it("shows a workspace's deployments as the API lists them, filtered by the API's own parameters", async () => {
    await createDeployment('ui-list-alpha-bot');
    await createDeployment('ui-list-beta-bot');
    for (const filters of [
      '',
      'name_contains=bot',
      'name_contains=ALPHA',
      'status=READY',
      'deployment_type=prod',
      'remote_reconciled=false',
      'status=UNUSED',
    ]) {
      const fromApi = (await client().get(`/v2/deployments?limit=20&${filters}`)).body.resources.map(
        (deployment: { name: string }) => deployment.name,
      );
      const { status, html } = await page(`/ui/deployments?workspace_id=${acme().id}&${filters}`);
      expect(status, filters).toBe(200);
      expect(listedNames(html), filters).toEqual(fromApi);
    }
    const filtered = (
      await page(`/ui/deployments?workspace_id=${acme().id}&name_contains=alpha&status=AWAITING_DATABASE`)
    ).html;
    expect(listedNames(filtered)).toEqual(['ui-list-alpha-bot']);
    // The form says what the URL filters by.
    expect(filtered).toContain('<input name="name_contains" value="alpha" autocomplete="off"/>');
    expect(filtered).toContain('<option value="AWAITING_DATABASE" selected="">AWAITING_DATABASE</option>');
    expect(filtered).toContain(`<option value="${acme().id}" selected="">${acme().name}</option>`);
  });

  it('lists the first workspace without one named, another when named', async () => {
    const [first, second] = dashboard.fixtures.workspaces;
    const names = async (workspace: FixtureWorkspace) =>
      (await inProcessApi(dashboard.lp, workspace).get('/v2/deployments?limit=20')).body.resources.map(
        (deployment: { name: string }) => deployment.name,
      );
    expect(listedNames((await page('/ui/deployments')).html)).toEqual(await names(first!));
    expect(listedNames((await page(`/ui/deployments?workspace_id=${second!.id}`)).html)).toEqual(await names(second!));
  });

  it('pages as the API pages: the offset it answers is the next page', async () => {
    const base = `/ui/deployments?workspace_id=${acme().id}&limit=2`;
    const first = (await page(base)).html;
    const apiFirst = (await client().get('/v2/deployments?limit=2')).body;
    expect(listedNames(first)).toEqual(apiFirst.resources.map((deployment: { name: string }) => deployment.name));
    const older = unescape(first.match(/<a href="([^"]+)" rel="next"/)![1]!);
    expect(older).toBe(`/ui/deployments?workspace_id=${acme().id}&limit=2&offset=${apiFirst.offset}`);
    const second = (await page(older)).html;
    const apiSecond = (await client().get(`/v2/deployments?limit=2&offset=${apiFirst.offset}`)).body;
    expect(listedNames(second)).toEqual(apiSecond.resources.map((deployment: { name: string }) => deployment.name));
    expect(unescape(second.match(/<a href="([^"]+)" rel="prev"/)![1]!)).toBe(
      `/ui/deployments?workspace_id=${acme().id}&limit=2&offset=0`,
    );
  });

  it('answers htmx with the results alone', async () => {
    const { html } = await page(`/ui/deployments?workspace_id=${acme().id}&name_contains=x`, { 'hx-request': 'true' });
    expect(html.startsWith('<section id="deployments-results"')).toBe(true);
    expect(html).not.toContain('<form');
  });

  it("shows the API's refusal of a filter at its field, a workspace it does not know in an alert", async () => {
    const badLimit = await page(`/ui/deployments?workspace_id=${acme().id}&limit=0`);
    expect(badLimit.status).toBe(422);
    expect(badLimit.html).toMatch(/<input name="limit"[^>]*value="0"[^>]*aria-invalid="true"[^>]*autofocus=""/);
    expect(badLimit.html).toContain('id="invalid-limit-error">Input should be greater than or equal to 1</span>');
    const badIds = await page(`/ui/deployments?workspace_id=${acme().id}&deployment_ids=nope`, {
      'hx-request': 'true',
    });
    // htmx: a 200 (htmx swaps in a success's answer), the results, then the form out of band, marked.
    expect(badIds.status).toBe(200);
    expect(badIds.html.startsWith('<section id="deployments-results"')).toBe(true);
    expect(badIds.html).toContain('aria-describedby="invalid-deployment_ids-error"');
    expect(badIds.html).toMatch(/<form id="deployment-filters"[^>]*hx-swap-oob="true"/);
    expect(badIds.html).toMatch(/<input name="deployment_ids" value="nope"[^>]*aria-invalid="true"/);
    expect(badIds.html).toContain('id="invalid-deployment_ids-error">Input should be a valid UUID');
    const unknown = await page('/ui/deployments?workspace_id=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(alertOf(unknown.html)).toBe('Workspace 00000000-0000-4000-8000-000000000000 not found');
  });
});

describe("a deployment's page", () => {
  it(
    'shows its revisions as a timeline on the emulator clock, its build and deploy logs, and only the names of its ' +
      'secrets',
    async () => {
      const created = await createDeployment('ui-detail', [{ name: 'OPENAI_API_KEY', value: 'sk-never-shown-4242' }]);
      await dashboard.lp.clock.advance(10);
      const { status, html } = await page(`/ui/deployments/${created.id}?workspace_id=${acme().id}`);
      expect(status).toBe(200);
      expect(html).toContain('<h1>ui-detail</h1>');
      const history = (
        await admin().get(`/_localplane/deployments/${created.id}/revisions/${created.latest_revision_id}/history`)
      ).body as { status: string; at: string }[];
      const timeline = html.match(
        new RegExp(
          `<tr id="revision-${created.latest_revision_id}" data-status="DEPLOYED">.*?<ol ` +
            `class="timeline"[^>]*>(.*?)</ol>`,
        ),
      )![1]!;
      expect(
        [
          ...timeline.matchAll(
            /<span class="badge [^"]+">([A-Z_]+)<\/span> <time datetime="([^"]+)"[^>]*>\+([^<]+)<\/time>/g,
          ),
        ].map(([, s, at, since]) => [s, at, since]),
      ).toEqual(
        history.map((entry, index) => [entry.status, entry.at, ['0s', '1s', '2s', '3s', '6s', '7s', '10s'][index]]),
      );
      for (const stream of ['build', 'deploy']) {
        const logs = (
          await client().post(`/v1/projects/${created.id}/revisions/${created.latest_revision_id}/${stream}_logs`, {
            order: 'asc',
          })
        ).body.logs as { message: string }[];
        expect(logs.length).toBeGreaterThan(0);
        for (const line of logs) expect(unescape(html)).toContain(line.message);
      }
      expect(html).toContain('<li class="mono">OPENAI_API_KEY</li>');
      expect(html).not.toContain('sk-never-shown-4242');
    },
  );

  it('is found from its id alone, and says when there is none', async () => {
    const created = await createDeployment('ui-by-id');
    const redirected = await page(`/ui/deployments/${created.id}`);
    expect(redirected.status).toBe(303);
    expect(redirected.location).toBe(`/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    const missing = await page('/ui/deployments/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(alertOf(missing.html)).toBe('Deployment ID 00000000-0000-4000-8000-000000000000 not found.');
    const malformed = await page(`/ui/deployments/nope?workspace_id=${acme().id}`);
    expect(malformed.status).toBe(422);
    expect(alertOf(malformed.html)).toMatch(/^path\.deployment_id: Input should be a valid UUID/);
  });

  it('polls while a revision is in progress, and not once none is', async () => {
    const created = await createDeployment('ui-polling');
    const path = `/ui/deployments/${created.id}?workspace_id=${acme().id}`;
    const live = await page(path, { 'hx-request': 'true' });
    expect(
      live.html.startsWith(`<div id="deployment-live" hx-get="${path.replace('&', '&amp;')}" hx-trigger="every 1s"`),
    ).toBe(true);
    await dashboard.lp.clock.advance(10);
    expect((await page(path, { 'hx-request': 'true' })).html.startsWith('<div id="deployment-live"><section')).toBe(
      true,
    );
    // A poll that finds the deployment gone says so, and polls no more.
    await client().post(`/v2/deployments/${created.id}/revisions`, {});
    expect((await client().delete(`/v2/deployments/${created.id}`)).status).toBe(204);
    const gone = await page(path, { 'hx-request': 'true' });
    expect(gone.status).toBe(200);
    expect(gone.html).toBe(
      `<div id="deployment-live"><p class="error" role="alert">Deployment ID ${created.id} not found.</p></div>`,
    );
  });
});

describe('the revision knobs', () => {
  it(
    'fail the next revision at build from a button: a new revision ends BUILD_FAILED when the clock moves, with ' +
      'the failure line in its build log',
    async () => {
      const created = await createDeployment('ui-knob-build');
      await dashboard.lp.clock.advance(10);
      const base = `/ui/deployments/${created.id}`;
      const armed = await post(`${base}/fault?workspace_id=${acme().id}`, {
        stage: 'build',
        message: 'npm ERR! missing script: build',
      });
      expect(armed.status).toBe(200);
      expect((await admin().get('/_localplane/faults')).body.revisions).toEqual([
        {
          stage: 'build',
          deployment_id: created.id,
          count: 1,
          message: 'npm ERR! missing script: build',
          remaining: 1,
        },
      ]);
      expect(unescape(armed.html)).toContain(
        'The next revision of this deployment ends BUILD_FAILED: npm ERR! missing script: build',
      );

      const made = await post(`${base}/revisions?workspace_id=${acme().id}`);
      const { body: newest } = await client().get(`/v2/deployments/${created.id}`);
      expect(newest.latest_revision_id).not.toBe(created.latest_revision_id);
      expect(made.html).toContain(`<tr id="revision-${newest.latest_revision_id}" data-status="CREATING">`);
      // The due work names where the knob ends it.
      expect(made.html).toContain('Revision moves from CREATING to QUEUED');

      await post('/ui/clock/advance', { span: '1m' });
      expect(await revisionStatus(created.id, newest.latest_revision_id)).toBe('BUILD_FAILED');
      const after = (await page(`${base}?workspace_id=${acme().id}`)).html;
      expect(after).toContain(`<tr id="revision-${newest.latest_revision_id}" data-status="BUILD_FAILED">`);
      expect(after).toContain('<td class="mono">npm ERR! missing script: build</td>');
      expect(after).toContain('<span class="muted"> npm ERR! missing script: build</span>');
    },
  );

  it('skip the next revision, and step it to its end with the advance button', async () => {
    const created = await createDeployment('ui-knob-skip');
    const base = `/ui/deployments/${created.id}`;
    await post(`${base}/fault?workspace_id=${acme().id}`, { stage: 'skip' });
    await post(`${base}/revisions?workspace_id=${acme().id}`);
    const { body: newest } = await client().get(`/v2/deployments/${created.id}`);
    let html = (await page(`${base}?workspace_id=${acme().id}`)).html;
    for (let steps = 0; steps < 5 && html.includes('Advance the clock to the next step'); steps++) {
      const until = html.match(/name="until" value="([^"]+)"/)![1]!;
      html = (await post(`${base}/advance?workspace_id=${acme().id}`, { until })).html;
    }
    expect(await revisionStatus(created.id, newest.latest_revision_id)).toBe('SKIPPED');
    expect(html).toContain(`<tr id="revision-${newest.latest_revision_id}" data-status="SKIPPED">`);
    // It moved to each due time, not past it.
    const history = (
      await admin().get(`/_localplane/deployments/${created.id}/revisions/${newest.latest_revision_id}/history`)
    ).body as { at: string }[];
    expect((await admin().get('/_localplane/clock')).body.now).toBe(history.at(-1)!.at);
  });

  it("force a revision's status, and show the API's refusal of one it does not know", async () => {
    const created = await createDeployment('ui-knob-force');
    const base = `/ui/deployments/${created.id}`;
    const forced = await post(`${base}/status?workspace_id=${acme().id}`, {
      revision_id: created.latest_revision_id,
      status: 'DEPLOY_FAILED',
    });
    expect(forced.status).toBe(200);
    expect(await revisionStatus(created.id, created.latest_revision_id)).toBe('DEPLOY_FAILED');
    expect(forced.html).toContain(`<tr id="revision-${created.latest_revision_id}" data-status="DEPLOY_FAILED">`);
    const unknown = await post(`${base}/status?workspace_id=${acme().id}`, {
      revision_id: '00000000-0000-4000-8000-000000000000',
      status: 'DEPLOYED',
    });
    expect(unknown.status).toBe(200);
    expect(alertOf(unknown.html)).toBe('Revision ID 00000000-0000-4000-8000-000000000000 not found.');
    // A refusal the API locates at a field of the form shows at that field.
    const invalid = await post(`${base}/status?workspace_id=${acme().id}`, {
      revision_id: '../../../reset',
      status: 'DEPLOYED',
    });
    expect(invalid.html).toContain('id="invalid-revision_id-error">Input should be a valid UUID</span>');
    expect(invalid.html).toMatch(/<select name="revision_id" id="invalid-revision_id" aria-invalid="true"/);
  });
});

describe("the dashboard's own calls to the public API", () => {
  it('are not in the request journal and no fault rule acts on them, not even one matching everything', async () => {
    const created = await createDeployment('ui-unjournaled');
    expect((await admin().call('DELETE', '/_localplane/requests')).status).toBe(204);
    const rule = await admin().post('/_localplane/fault-rules', { action: { status: 503 } });
    expect(rule.status, rule.text).toBe(201);

    const list = await page(`/ui/deployments?workspace_id=${acme().id}`);
    expect(list.status).toBe(200);
    expect(listedNames(list.html)).toContain('ui-unjournaled');
    const detail = await page(`/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain('<h3>Build log</h3><table');
    expect((await post(`/ui/deployments/${created.id}/revisions?workspace_id=${acme().id}`)).status).toBe(200);
    expect((await page('/ui/clock')).status).toBe(200);

    expect((await admin().get('/_localplane/requests')).body.requests).toEqual([]);
    expect((await admin().get('/_localplane/fault-rules')).body.rules).toMatchObject([{ id: rule.body.id, fired: 0 }]);
    // The same call from a client is journaled, and the rule answers it.
    expect((await client().get('/v2/deployments')).status).toBe(503);
    expect((await admin().get('/_localplane/requests')).body.requests).toMatchObject([
      { method: 'GET', path: '/v2/deployments', status: 503 },
    ]);
  });
});
