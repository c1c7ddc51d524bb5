/**
 * The Faults view as app.request() sees it: fault rules added from its form firing on real API
 * requests and counted, the API's refusals beside the forms, deleting rules, and the knobs armed
 * and disarmed from their forms.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import type { FixtureWorkspace } from '../support/instance.ts';
import { HTMX, okPage, postForm } from './support/dashboard.ts';

let lp: InProcessLocalplane;
let acme: FixtureWorkspace;

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  acme = (await fixturesOf(lp)).workspaces.find((workspace) => workspace.tier === 'plus')!;
});

afterAll(async () => {
  await lp?.stop();
});

beforeEach(async () => {
  await lp.reset();
});

const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(lp, path, fields, headers);
const page = (path: string, headers: Record<string, string> = {}) => okPage(lp, path, headers);

const admin = () => inProcessApi(lp);
const rules = async () =>
  (
    (await admin().get('/_localplane/fault-rules')).body as {
      rules: { id: string; fired: number; match: unknown; action: unknown; count: number | null }[];
    }
  ).rules;
const knobs = async () => (await admin().get('/_localplane/faults')).body as Record<string, { remaining: number }[]>;

/** The fault-rule form as a person leaves it: every field sent, the unused ones empty. */
const ruleForm = (fields: Record<string, string>) => ({
  match_source: '',
  match_method: '',
  match_path: '',
  match_workspace_id: '',
  match_header_name: '',
  match_header_value: '',
  action: 'status',
  status: '503',
  detail: '',
  code: '',
  headers: '',
  body: '',
  latency_ms: '',
  latency_min_ms: '',
  latency_max_ms: '',
  latency_mean_ms: '',
  latency_stddev_ms: '',
  probability: '1',
  count: '',
  ...fields,
});

/** The Fired cell of a rule's row. */
const firedOf = (html: string, ruleId: string) =>
  html.match(
    new RegExp(`<th scope="row" class="mono">${ruleId}</th>.*?<td class="num" data-fired="(\\d+)">`, 's'),
  )?.[1];

describe('the fault rules at /ui/faults', () => {
  it('adds a rule from the form that fires on a real API request, and shows it fired once', async () => {
    const added = await post(
      '/ui/faults/rules',
      ruleForm({
        match_source: 'api',
        match_method: 'GET',
        match_path: '/api/v1/bulk-exports*',
        match_workspace_id: acme.id,
        detail: 'injected from the dashboard',
        count: '2',
      }),
      HTMX,
    );
    expect(added.status).toBe(200);
    const fragment = await added.text();
    // The form comes back empty, the rules beside it out of band.
    expect(fragment.startsWith('<section id="fault-rule-form"')).toBe(true);
    expect(fragment).toContain('<section id="fault-rules" aria-labelledby="fault-rules-heading" hx-swap-oob="true"');
    expect(firedOf(fragment, 'fault-rule-1')).toBe('0');
    expect(await rules()).toEqual([
      expect.objectContaining({
        id: 'fault-rule-1',
        match: { source: 'api', method: 'GET', path: '/api/v1/bulk-exports*', workspace_id: acme.id },
        action: { status: 503, detail: 'injected from the dashboard' },
        count: 2,
      }),
    ]);

    const faulted = await inProcessApi(lp, acme).get('/api/v1/bulk-exports');
    expect(faulted.status).toBe(503);
    expect(faulted.body).toEqual({ detail: 'injected from the dashboard' });

    const html = await page('/ui/faults');
    expect(html).toContain('<a href="/ui/faults" aria-current="page">Faults</a>');
    expect(firedOf(html, 'fault-rule-1')).toBe('1');
    expect(html).toContain(`api GET /api/v1/bulk-exports* in ${acme.name}`);
    expect(html).toContain('503 “injected from the dashboard”');
    // 2 times, 1 used: 1 left; and the rules refresh themselves while there are any.
    expect(html).toMatch(
      new RegExp(
        String.raw`data-fired="1"><a href="\/ui\/requests\?fault_rule=fault-rule-1" ` +
          String.raw`aria-label="1: the requests fault-rule-1 fired on">1<\/a><\/td><td class="num">1<\/td>`,
      ),
    );
    expect(html).toMatch(/<section id="fault-rules" [^>]*hx-get="\/ui\/faults" hx-trigger="every 1s"/);
    // What the refresh asks for: the rules alone.
    const refreshed = await page('/ui/faults', HTMX);
    expect(refreshed.startsWith('<section id="fault-rules"')).toBe(true);
    expect(firedOf(refreshed, 'fault-rule-1')).toBe('1');
  });

  it('adds each kind of action, and a header match', async () => {
    const forms: Record<string, string>[] = [
      { action: 'latency', latency_ms: '250' },
      { action: 'drop', match_header_name: 'x-test', match_header_value: 'drop me' },
      { action: 'close', match_source: 'objstore', probability: '0.5' },
      { action: 'status', status: '500', code: 'InternalError', match_source: 'objstore' },
    ];
    for (const fields of forms) {
      expect((await post('/ui/faults/rules', ruleForm(fields))).status).toBe(303);
    }
    expect((await rules()).map(({ match, action }) => ({ match, action }))).toEqual([
      { match: {}, action: { latency_ms: 250 } },
      { match: { header: { name: 'x-test', value: 'drop me' } }, action: { drop_connection: true } },
      { match: { source: 'objstore' }, action: { empty_reply: true } },
      { match: { source: 'objstore' }, action: { status: 500, code: 'InternalError' } },
    ]);
    const html = await page('/ui/faults');
    for (const text of [
      '<td>every request</td><td>+250 ms</td>',
      '<td>with header x-test: drop me</td><td>drop the connection</td>',
      '<td>objstore</td><td>empty reply</td>',
      '<td>500 InternalError</td>',
    ]) {
      expect(html).toContain(text);
    }
  });

  it('sets reply headers, a JSON body and latency ranges from the form, which act as set', async () => {
    const forms: Record<string, string>[] = [
      {
        match_path: '/api/v1/bulk-exports/destinations',
        status: '429',
        headers: 'Retry-After: 30\nX-Injected: dashboard',
        body: '{"detail": "slow down", "retry": true}',
        count: '1',
      },
      { action: 'latency_uniform', latency_min_ms: '10', latency_max_ms: '20', match_path: '/never/one' },
      { action: 'latency_normal', latency_mean_ms: '50', latency_stddev_ms: '5', match_path: '/never/two' },
    ];
    for (const fields of forms) expect((await post('/ui/faults/rules', ruleForm(fields))).status).toBe(303);
    expect((await rules()).map(({ action }) => action)).toEqual([
      {
        status: 429,
        headers: { 'Retry-After': '30', 'X-Injected': 'dashboard' },
        body: { detail: 'slow down', retry: true },
      },
      { latency: { distribution: 'uniform', min_ms: 10, max_ms: 20 } },
      { latency: { distribution: 'normal', mean_ms: 50, stddev_ms: 5 } },
    ]);

    const faulted = await lp.request('/api/v1/bulk-exports/destinations', {
      headers: { 'X-API-Key': acme.api_key, 'X-Tenant-Id': acme.id },
    });
    expect(faulted.status).toBe(429);
    expect(faulted.headers.get('retry-after')).toBe('30');
    expect(faulted.headers.get('x-injected')).toBe('dashboard');
    expect(await faulted.json()).toEqual({ detail: 'slow down', retry: true });

    const html = await page('/ui/faults');
    expect(html).toContain('429 with Retry-After: 30, X-Injected: dashboard body {&quot;detail&quot;:');
    expect(html).toContain('<td>+10–20 ms</td>');
    expect(html).toContain('<td>+50 ± 5 ms</td>');
  });

  it('shows how often each rule was checked, and the near misses linked to their requests and rules', async () => {
    await admin().post('/_localplane/fault-rules', {
      match: { method: 'POST', path: '/api/v1/bulk-exports/destinations' },
      action: { status: 500 },
    });
    const client = inProcessApi(lp, acme);
    expect((await client.get('/api/v1/bulk-exports/destinations')).status).toBe(200);
    expect((await client.get('/api/v1/bulk-exports')).status).toBe(200);
    const { requests } = (await admin().get('/_localplane/requests')).body as { requests: { id: number }[] };
    const [first, second] = requests.map((request) => request.id);

    const html = await page('/ui/faults');
    expect(html).toMatch(/<th scope="row" class="mono">fault-rule-1<\/th>.*?<td class="num" data-checked="2">2<\/td>/s);
    const nearMisses = html.slice(html.indexOf('<h3 id="near-misses-heading">'));
    // Newest first: the second request missed the method and the path, the first the method only.
    expect(nearMisses).toMatch(
      new RegExp(
        `<a href="/ui/requests/${second}">#${second} GET <span class="mono">/api/v1/bulk-exports</span></a>.*?` +
          '<a href="/ui/faults#fault-rule-1" class="mono">fault-rule-1</a>.*?' +
          '<span class="mono">method</span>: wanted <code>POST</code>, got <code>GET</code>.*?' +
          '<span class="mono">path</span>: wanted <code>/api/v1/bulk-exports/destinations</code>, got ' +
          '<code>/api/v1/bulk-exports</code>.*?' +
          `<a href="/ui/requests/${first}">#${first} GET`,
        's',
      ),
    );
    // The row a link names by #fault-rule-1 carries that id.
    expect(html).toContain('<tr id="fault-rule-1">');
  });

  it('marks each field the API refused, in plain words, with a summary linking to it, keeping what was typed', async () => {
    const manyWildcards = `/${'a*'.repeat(33)}`;
    const fields = ruleForm({ match_path: manyWildcards, status: '', probability: '2' });
    const whole = await post('/ui/faults/rules', fields);
    expect(whole.status).toBe(422);
    const fragment = await (await post('/ui/faults/rules', fields, HTMX)).text();
    for (const html of [await whole.text(), fragment]) {
      const summary = html.match(/<div class="error-summary" role="alert">(.*?)<\/div>/s)?.[1];
      expect(summary).toContain('3 fields need a change:');
      expect(summary).toContain('<a href="#invalid-match_path">Match path: A glob has at most 32 wildcards</a>');
      expect(summary).toContain(
        '<a href="#invalid-action">Action: An action has exactly one of status, latency_ms, latency, ' +
          'drop_connection, empty_reply; got none</a>',
      );
      expect(summary).toContain(
        '<a href="#invalid-probability">Probability: Input should be less than or equal to 1</a>',
      );
      // The first refused field has the focus of a whole page; each is invalid and described by its message.
      expect(html).toMatch(
        new RegExp(
          '<input name="match_path" [^>]* value="[/a*]+" [^>]*id="invalid-match_path" aria-invalid="true" ' +
            'aria-describedby="invalid-match_path-error" autofocus=""/>',
        ),
      );
      expect(html).toContain('<span class="field-error" id="invalid-match_path-error">A glob has at most 32 wildcards');
      expect(html).toMatch(
        /<select name="action" id="invalid-action" aria-invalid="true" aria-describedby="invalid-action-error">/,
      );
      expect(html).toMatch(
        /<input name="probability" [^>]*aria-invalid="true" aria-describedby="invalid-probability-error"\/>/,
      );
      expect(html.match(/autofocus/g)).toHaveLength(1);
      expect(html).not.toContain('body.match.path');
      expect(html).not.toContain('Value error');
    }
    expect(await rules()).toEqual([]);
  });

  it('refuses headers and a body it cannot read at their own fields, before the API', async () => {
    const html = await (
      await post('/ui/faults/rules', ruleForm({ headers: 'Retry-After 30', body: '{nope' }), HTMX)
    ).text();
    expect(html).toContain('<a href="#invalid-headers">Headers: “Retry-After 30” is no header: write Name: value</a>');
    expect(html).toMatch(/<textarea name="headers" [^>]*id="invalid-headers" aria-invalid="true"[^>]*>Retry-After 30</);
    expect(await rules()).toEqual([]);
    const body = await (await post('/ui/faults/rules', ruleForm({ body: '{nope' }), HTMX)).text();
    expect(body).toContain('<span class="field-error" id="invalid-body-error">The body is not JSON');
  });

  it('constrains the fields as the API does, so the browser refuses values out of range before sending', async () => {
    const html = await page('/ui/faults');
    expect(html).toMatch(/<input name="status" type="number" inputmode="numeric" min="400" max="599" step="1"/);
    expect(html).toMatch(/<input name="probability" type="number" min="0" max="1" step="any"/);
    expect(html).toMatch(/<input name="count" type="number" inputmode="numeric" min="1" step="1"/);
    expect(html).toMatch(/<input name="latency_min_ms" type="number" min="0" max="60000" step="any"/);
  });

  it('deletes one rule, then all', async () => {
    for (const path of ['/one', '/two', '/three'])
      await admin().post('/_localplane/fault-rules', { match: { path }, action: { status: 500 } });
    const afterOne = await (await post('/ui/faults/rules/fault-rule-2/delete', {}, HTMX)).text();
    expect(afterOne.startsWith('<section id="fault-rules"')).toBe(true);
    expect(afterOne).not.toContain('fault-rule-2');
    expect((await rules()).map((rule) => rule.id)).toEqual(['fault-rule-1', 'fault-rule-3']);

    const gone = await (await post('/ui/faults/rules/fault-rule-2/delete', {}, HTMX)).text();
    expect(gone).toContain('<p class="error" role="alert">Fault rule fault-rule-2 not found</p>');

    const plain = await post('/ui/faults/rules/delete', {});
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toBe('/ui/faults');
    expect(await rules()).toEqual([]);
    const html = await page('/ui/faults');
    expect(html).toContain('No fault rules');
    expect(html).not.toContain('hx-trigger="every 1s"');
  });
});

describe('the knobs at /ui/faults', () => {
  it('arms each knob from its form, lists them with the uses left, and disarms them all', async () => {
    const deployment = acme.deployments[0]!;
    const answers = [
      await post(
        '/ui/faults/knobs/destination-validations',
        { error: 'invalid_bucket', count: '2', workspace_id: acme.id, endpoint_url: '' },
        HTMX,
      ),
      await post(
        '/ui/faults/knobs/export-runs',
        { mode: 'slow', count: '1', attempts: '', message: '', delay_seconds: '90' },
        HTMX,
      ),
      await post(
        '/ui/faults/knobs/revisions',
        { stage: 'build', count: '1', deployment_id: deployment.id, message: 'no room on the builder' },
        HTMX,
      ),
    ];
    for (const answer of answers) expect((await answer.text()).startsWith('<section id="knobs"')).toBe(true);
    expect(await knobs()).toEqual({
      destination_validations: [{ error: 'invalid_bucket', count: 2, workspace_id: acme.id, remaining: 2 }],
      export_runs: [{ mode: 'slow', count: 1, delay_seconds: 90, remaining: 1 }],
      revisions: [
        { stage: 'build', count: 1, deployment_id: deployment.id, message: 'no room on the builder', remaining: 1 },
      ],
    });
    const html = await page('/ui/faults');
    expect(html).toContain(
      `<td>destination validations fail with invalid_bucket in ${acme.name}</td><td class="num">2</td>`,
    );
    expect(html).toContain('<td>export runs wait 90 s (emulator clock) before each file</td><td class="num">1</td>');
    expect(html).toContain(
      `<td>revisions fail at build of deployment ${deployment.id} with “no room on the builder”</td>`,
    );
    expect(html).toContain(`<option value="${deployment.id}">${deployment.name} (${acme.name})</option>`);

    const disarmed = await (await post('/ui/faults/knobs/delete', {}, HTMX)).text();
    expect(disarmed).toContain('No knob is armed.');
    expect(await knobs()).toEqual({ destination_validations: [], export_runs: [], revisions: [] });
  });

  it("shows a knob's refusal beside its own form", async () => {
    const response = await post('/ui/faults/knobs/revisions', {
      stage: 'build',
      count: '1',
      deployment_id: 'not-a-uuid',
      message: '',
    });
    expect(response.status).toBe(422);
    const html = await response.text();
    const revisionsForm = html.slice(html.indexOf('aria-label="Fail or skip the next revisions"'));
    expect(revisionsForm).toMatch(
      /^[^>]*><div class="error-summary" role="alert">.*?<a href="#invalid-deployment_id">Deployment id: [^<]+<\/a>/s,
    );
    expect(revisionsForm).toMatch(/<input name="deployment_id" [^>]*aria-invalid="true"/);
    expect(html.match(/role="alert"/g)).toHaveLength(1);
  });
});
