/**
 * What the Deployments view changes, through app.request(): creating, changing, redeploying and deleting deployments,
 * the deploy flow's push token and upload URL, a deployment's forced status; the OAuth providers, listeners and
 * codehost integrations tabs. Each change is checked through the API, each refusal shows the API's detail, and no
 * secret comes back in a page.
 */
import { describe, expect, it } from 'vitest';

import { cliCreateBody, codehostDeploymentBody } from '../support/deployments.ts';
import { inProcessApi } from '../support/in-process.ts';
import type { FixtureWorkspace } from '../support/instance.ts';
import { HTMX, okPage, postForm, useFrozenDashboard } from './support/dashboard.ts';

const dashboard = useFrozenDashboard();

const acme = (): FixtureWorkspace => dashboard.fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
const globex = (): FixtureWorkspace => dashboard.fixtures.workspaces.find((workspace) => workspace.self_hosted)!;
const asAcme = () => inProcessApi(dashboard.lp, acme());

const SECRET = 'sk-dashboard-secret-value-0001';

const unescape = (text: string) => text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
const alertOf = (html: string) => unescape(html.match(/role="alert">([^<]*)</)?.[1] ?? '');
const noticeOf = (html: string) => unescape(html.match(/class="notice" role="status">([^<]*)</)?.[1] ?? '');

/** A form posted as htmx posts it: the status, the page and where htmx is sent. */
async function post(path: string, form: Record<string, string> = {}) {
  const response = await postForm(dashboard.lp, path, form, HTMX);
  return { status: response.status, html: await response.text(), redirect: response.headers.get('hx-redirect') };
}

async function createDeployment(name: string, workspace = acme(), body = codehostDeploymentBody(workspace, name)) {
  const response = await inProcessApi(dashboard.lp, workspace).post<{ id: string; latest_revision_id: string }>(
    '/v2/deployments',
    body,
  );
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const detailPath = (id: string, action = '', workspace = acme()) =>
  `/ui/deployments/${id}${action}?workspace_id=${workspace.id}`;

describe('deployments from the dashboard', () => {
  it('creates a deployment from the form, its secrets masked, and shows it', async () => {
    const integration = acme().integrations[0]!;
    const { status, redirect } = await post(`/ui/deployments/create?workspace_id=${acme().id}`, {
      name: 'from-the-form',
      source: 'codehost',
      'source_config.deployment_type': 'dev',
      'source_config.integration_id': integration.id,
      'source_config.repo_url': integration.repos[0]!.url,
      'source_revision_config.repo_ref': integration.repos[0]!.default_branch,
      'source_revision_config.graph_config_path': 'graph.json',
      'source_revision_config.image_uri': '',
      'source_config.listener_id': '',
      secrets: `OPENAI_API_KEY=${SECRET}\nOTHER=a=b`,
    });
    expect(status).toBe(204);
    const { body: list } = await asAcme().get<{ resources: { id: string; name: string; secrets: unknown[] }[] }>(
      '/v2/deployments?name_contains=from-the-form',
    );
    const created = list.resources[0]!;
    expect(created.secrets).toEqual([
      { name: 'OPENAI_API_KEY', value: '********' },
      { name: 'OTHER', value: '********' },
    ]);
    expect(redirect).toBe(detailPath(created.id));
    const html = await okPage(dashboard.lp, redirect!);
    expect(html).toContain('<li class="mono">OPENAI_API_KEY</li>');
    expect(html).not.toContain(SECRET);
  });

  it("shows the API's refusal of a creation at the form, without the secrets typed", async () => {
    const { status, html, redirect } = await post(`/ui/deployments/create?workspace_id=${acme().id}`, {
      ...{ name: 'refused', source: 'codehost', 'source_config.integration_id': acme().integrations[0]!.id },
      'source_config.repo_url': acme().integrations[0]!.repos[0]!.url,
      secrets: `KEY=${SECRET}`,
    });
    expect(status).toBe(200);
    expect(redirect).toBeNull();
    expect(alertOf(html)).toBe('Source configuration error: repo_ref is required for source codehost.');
    expect(html).toContain('<details id="deployment-create" open="">');
    expect(html).toContain('value="refused"');
    expect(html).not.toContain(SECRET);
    // A plain form's answer is the list page with the form open, at the API's status.
    const plain = await postForm(dashboard.lp, `/ui/deployments/create?workspace_id=${acme().id}`, {
      name: 'refused',
      source: 'codehost',
      secrets: `KEY=${SECRET}`,
    });
    const page = await plain.text();
    expect(plain.status).toBeGreaterThanOrEqual(400);
    expect(plain.status).toBeLessThan(500);
    expect(page).toContain('<title>Deployments · localplane</title>');
    expect(page).toContain('<details id="deployment-create" open="">');
    expect(alertOf(page)).not.toBe('');
    expect(page).not.toContain(SECRET);
  });

  it('shows a name the API refuses at the name field, focused, on a whole page and to htmx', async () => {
    const form = { name: ' ', source: 'codehost', 'source_config.repo_url': '', secrets: `KEY=${SECRET}` };
    const { html } = await post(`/ui/deployments/create?workspace_id=${acme().id}`, form);
    expect(html.startsWith('<details id="deployment-create" open="">')).toBe(true);
    expect(html).toMatch(/<input name="name" value=""[^>]*id="invalid-name" aria-invalid="true"/);
    expect(html).toContain('<a href="#invalid-name">Name: ');
    const plain = await postForm(dashboard.lp, `/ui/deployments/create?workspace_id=${acme().id}`, form);
    expect(plain.status).toBe(422);
    const page = await plain.text();
    expect(page).toMatch(/<input name="name"[^>]*id="invalid-name" aria-invalid="true"[^>]*autofocus=""/);
    expect(page).not.toContain(SECRET);
  });

  it('changes, redeploys, forces the status of and deletes a deployment', async () => {
    const created = await createDeployment('changed');
    const patched = await post(detailPath(created.id, '/patch'), {
      'source_revision_config.repo_ref': 'refs/heads/release',
      'source_revision_config.graph_config_path': '',
      'source_revision_config.image_uri': '',
      secrets: `NEW_KEY=${SECRET}`,
    });
    expect(noticeOf(patched.html)).toBe('Changed source_revision_config, secrets.');
    expect(patched.html).not.toContain(SECRET);
    const afterPatch = (
      await asAcme().get<{ latest_revision_id: string; secrets: { name: string }[] }>(`/v2/deployments/${created.id}`)
    ).body;
    expect(afterPatch.latest_revision_id).not.toBe(created.latest_revision_id);
    expect(afterPatch.secrets.map((secret) => secret.name)).toEqual(['NEW_KEY']);

    const refusedPatch = await post(detailPath(created.id, '/patch'), { name: 'renamed' });
    expect(alertOf(refusedPatch.html)).not.toBe('');

    await post(detailPath(created.id, '/redeploy'), { revision_id: created.latest_revision_id });
    const revisions = (await asAcme().get<{ resources: unknown[] }>(`/v2/deployments/${created.id}/revisions`)).body;
    expect(revisions.resources).toHaveLength(3);

    const unknownRevision = await post(detailPath(created.id, '/redeploy'), {
      revision_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknownRevision.html).toMatch(/id="invalid-revision_id-error">[^<]*not found/i);

    await post(detailPath(created.id, '/deployment-status'), { status: 'UNUSED' });
    expect((await asAcme().get<{ status: string }>(`/v2/deployments/${created.id}`)).body.status).toBe('UNUSED');

    const deleted = await post(detailPath(created.id, '/delete'), { delete_tracing_project: 'true' });
    expect(deleted.status).toBe(204);
    expect(deleted.redirect).toBe(`/ui/deployments?workspace_id=${acme().id}`);
    expect((await asAcme().get(`/v2/deployments/${created.id}`)).status).toBe(404);
    // A plain form is sent on by a 303.
    const again = await createDeployment('plain');
    const plain = await postForm(dashboard.lp, detailPath(again.id, '/delete'), {});
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toBe(`/ui/deployments?workspace_id=${acme().id}`);
  });

  it("shows the API's refusal of a redeploy at the Revision id field, on a whole page and to htmx", async () => {
    const created = await createDeployment('redeployed');
    const page = await okPage(dashboard.lp, detailPath(created.id));
    expect(page).toMatch(/<form id="redeploy"[^>]*data-route="POST \/v2\/deployments\/:deployment_id\/revisions/);
    expect(page).toContain(`<option value="${created.latest_revision_id}"></option>`);
    for (const [revisionId, message] of [
      ['00000000-0000-4000-8000-000000000000', /not found/i],
      ['not-a-uuid', /UUID/],
    ] as const) {
      const { status, html } = await post(detailPath(created.id, '/redeploy'), { revision_id: revisionId });
      expect(status).toBe(200);
      const field = html.match(/<input name="revision_id"[^>]*>/)![0];
      expect(field).toContain(`value="${revisionId}"`);
      expect(field).toContain('id="invalid-revision_id" aria-invalid="true"');
      expect(field).toContain('aria-describedby="invalid-revision_id-error"');
      expect(html).toMatch(new RegExp(`id="invalid-revision_id-error">[^<]*${message.source}`, message.flags));
      expect(html).not.toContain('<p class="error" role="alert">');
    }
    const plain = await postForm(dashboard.lp, detailPath(created.id, '/redeploy'), { revision_id: 'not-a-uuid' });
    expect(plain.status).toBe(422);
    expect(await plain.text()).toMatch(/<input name="revision_id"[^>]*aria-invalid="true"[^>]*autofocus=""/);
  });

  it('deletes the deployments selected in the list, and says how many', async () => {
    const [first, second] = [await createDeployment('bulk-a'), await createDeployment('bulk-b')];
    const list = await okPage(dashboard.lp, `/ui/deployments?workspace_id=${acme().id}&name_contains=bulk`);
    expect(list).toContain(`form="delete-deployments"`);
    expect(list).toContain('data-route="DELETE /v2/deployments"');
    const response = await postForm(
      dashboard.lp,
      `/ui/deployments/delete?workspace_id=${acme().id}&name_contains=bulk`,
      // Repeated fields, as the checkboxes send them.
      {},
      HTMX,
    );
    expect(noticeOf(await response.text())).toBe('Select the deployments to delete.');
    const deleted = await dashboard.lp.request(`/ui/deployments/delete?workspace_id=${acme().id}&name_contains=bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTMX },
      body: `deployment_ids=${first.id}&deployment_ids=${second.id}`,
    });
    const html = await deleted.text();
    expect(noticeOf(html)).toBe('Deleted 2 of 2.');
    expect(html).toContain('No deployment matches.');
    for (const { id } of [first, second]) expect((await asAcme().get(`/v2/deployments/${id}`)).status).toBe(404);
  });

  it('issues a push token and an upload URL without showing the token or the signature', async () => {
    const codehost = await createDeployment('codehost-one');
    const refused = await post(detailPath(codehost.id, '/push-token'));
    expect(alertOf(refused.html)).toMatch(/internal_container/);

    const container = await createDeployment(
      'container-one',
      acme(),
      cliCreateBody('container-one', 'internal_container', []) as never,
    );
    const token = await post(detailPath(container.id, '/push-token'));
    expect(noticeOf(token.html)).toMatch(
      /^A push token for https:\/\/\S+ was issued, valid until \S+ \(not shown\)\.$/,
    );
    expect(token.html).not.toContain('lp-push-');

    const upload = await post(detailPath(container.id, '/upload-url'));
    expect(noticeOf(upload.html)).toMatch(/^An upload URL was issued: PUT a tarball to http:\/\/\S+; a revision names/);
    expect(upload.html).not.toMatch(/X-Amz-Signature/i);
  });
});

describe('the OAuth providers tab', () => {
  const path = (action = '') => `/ui/deployments/providers${action}?workspace_id=${acme().id}`;
  type Provider = { provider_id: string; name: string; client_id: string };
  const providers = async () => (await asAcme().get<Provider[]>('/v2/auth/providers')).body;

  it('lists the providers with the tabs, creates, changes and deletes one, its client secret never shown', async () => {
    const html = await okPage(dashboard.lp, path());
    expect(html).toContain('<a href="/ui/deployments" aria-current="page">Deployments</a>');
    expect(html).toContain(`aria-current="page">OAuth providers</a>`);
    for (const provider of await providers()) expect(html).toContain(`id="provider-${provider.provider_id}"`);

    const created = await post(path(), {
      provider_id: 'dashboard-oauth',
      name: 'Dashboard OAuth',
      client_id: 'client-1',
      client_secret: SECRET,
      auth_url: 'https://auth.example/authorize',
      token_url: 'https://auth.example/token',
      provider_type: '',
      token_endpoint_auth_method: '',
      code_challenge_method: '',
    });
    expect(noticeOf(created.html)).toBe('Created the OAuth provider dashboard-oauth.');
    expect(created.html).toContain('id="provider-dashboard-oauth"');
    expect(created.html).not.toContain(SECRET);
    expect((await providers()).find((provider) => provider.provider_id === 'dashboard-oauth')).toMatchObject({
      name: 'Dashboard OAuth',
      client_id: 'client-1',
    });

    const duplicate = await post(path(), {
      provider_id: 'dashboard-oauth',
      name: 'again',
      client_id: 'x',
      client_secret: SECRET,
      auth_url: 'https://a',
      token_url: 'https://t',
    });
    // A taken id: at the id field, what was typed kept but the secret.
    expect(duplicate.html).toMatch(/id="invalid-provider_id-error">[^<]*dashboard-oauth/);
    expect(duplicate.html).toMatch(/<input name="provider_id" value="dashboard-oauth"[^>]*id="invalid-provider_id"/);
    expect(duplicate.html).toMatch(/id="invalid-provider_id" aria-invalid="true"[^>]*autofocus=""/);
    expect(duplicate.html).toContain('<input name="name" value="again"');
    expect(duplicate.html).not.toContain(SECRET);

    const changed = await post(path('/dashboard-oauth/update'), { name: 'Renamed', client_id: '', client_secret: '' });
    expect(noticeOf(changed.html)).toBe('Changed the OAuth provider dashboard-oauth.');
    expect((await providers()).find((provider) => provider.provider_id === 'dashboard-oauth')).toMatchObject({
      name: 'Renamed',
      client_id: 'client-1',
    });

    const deleted = await post(path('/dashboard-oauth/delete'));
    expect(noticeOf(deleted.html)).toBe('Deleted the OAuth provider dashboard-oauth.');
    expect((await providers()).map((provider) => provider.provider_id)).not.toContain('dashboard-oauth');
    expect(alertOf((await post(path('/dashboard-oauth/delete'))).html)).not.toBe('');
  });

  it('keeps a "true" typed in a text field as the text, not as a boolean the API refuses', async () => {
    const [provider] = await providers();
    const changed = await post(path(`/${provider!.provider_id}/update`), { name: 'true', client_id: '' });
    expect(noticeOf(changed.html)).toBe(`Changed the OAuth provider ${provider!.provider_id}.`);
    expect(changed.html).not.toContain('aria-invalid');
    expect((await providers()).find((each) => each.provider_id === provider!.provider_id)!.name).toBe('true');
  });

  it("shows the API's refusal of an MCP server it cannot discover at its URL field", async () => {
    const refused = await post(path('/mcp-discover'), {
      provider_id: 'mcp-one',
      name: 'MCP',
      mcp_server_url: 'https://nowhere.example/mcp',
    });
    expect(refused.status).toBe(200);
    expect(refused.html).toMatch(/id="invalid-mcp_server_url-error">[^<]*nowhere\.example/);
    expect(refused.html).toMatch(
      /<input name="mcp_server_url" value="https:\/\/nowhere.example\/mcp"[^>]*aria-invalid/,
    );
  });
});

describe('the listeners tab', () => {
  const path = (workspace: FixtureWorkspace, action = '') =>
    `/ui/deployments/listeners${action}?workspace_id=${workspace.id}`;
  type Listener = { id: string; compute_id: string; version: string | null; compute_config: unknown };
  const listeners = async () =>
    (await inProcessApi(dashboard.lp, globex()).get<{ resources: Listener[] }>('/v2/listeners')).body.resources;

  it("creates, changes and deletes a self-hosted workspace's listener", async () => {
    const html = await okPage(dashboard.lp, path(globex()));
    for (const listener of await listeners()) expect(html).toContain(`id="listener-${listener.id}"`);
    const created = await post(path(globex()), {
      compute_type: 'k8s',
      compute_id: 'dashboard-cluster',
      'compute_config.k8s_namespaces': 'one, two',
      version: '',
    });
    expect(noticeOf(created.html)).toBe('Created the listener dashboard-cluster.');
    const listener = (await listeners()).find((each) => each.compute_id === 'dashboard-cluster')!;
    expect(listener.compute_config).toEqual({ k8s_namespaces: ['one', 'two'] });

    await post(path(globex(), `/${listener.id}/update`), { version: '1.2.3', 'compute_config.k8s_namespaces': '' });
    expect((await listeners()).find((each) => each.id === listener.id)).toMatchObject({
      version: '1.2.3',
      compute_config: { k8s_namespaces: ['one', 'two'] },
    });

    expect(noticeOf((await post(path(globex(), `/${listener.id}/delete`))).html)).toMatch(/^Deleted the listener/);
    expect((await listeners()).map((each) => each.id)).not.toContain(listener.id);
  });

  it('keeps a "true" typed as a listener\'s version as the text', async () => {
    const [listener] = await listeners();
    const changed = await post(path(globex(), `/${listener!.id}/update`), {
      version: 'true',
      'compute_config.k8s_namespaces': 'kept',
    });
    expect(noticeOf(changed.html)).toMatch(/^Changed the listener/);
    expect(changed.html).not.toContain('aria-invalid');
    const kept = (await listeners()).find((each) => each.id === listener!.id) as unknown as {
      version: string;
      compute_config: { k8s_namespaces: string[] };
    };
    expect([kept.version, kept.compute_config.k8s_namespaces]).toEqual(['true', ['kept']]);
  });

  it("shows the API's refusal of a listener for a workspace that is not self-hosted", async () => {
    const html = await okPage(dashboard.lp, path(acme()));
    expect(html).toContain('No listener.');
    expect(html).toContain('data-route="POST /v2/listeners"');
    const refused = await post(path(acme()), {
      compute_type: 'k8s',
      compute_id: 'x',
      'compute_config.k8s_namespaces': 'a',
    });
    expect(alertOf(refused.html)).toMatch(/self-hosted/);
  });
});

describe('the codehost integrations tab', () => {
  it('lists the integrations and their repositories', async () => {
    const html = await okPage(dashboard.lp, `/ui/deployments/integrations?workspace_id=${acme().id}`);
    for (const integration of acme().integrations) {
      expect(html).toContain(`id="integration-${integration.id}"`);
      for (const repo of integration.repos) expect(html).toContain(repo.url);
    }
  });
});
