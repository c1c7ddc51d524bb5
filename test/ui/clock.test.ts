/**
 * The Clock view at /ui/clock through app.request(): the emulator clock frozen or running, moved
 * by the buttons, a typed span or to a time, and the due work it shows, as the API has them.
 */
import { describe, expect, it } from 'vitest';

import { parseSpan } from '../../src/ui/spans.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { inProcessApi } from '../support/in-process.ts';
import { eventually } from '../support/instance.ts';
import { parquetUpload, startObjstoreProxy } from '../support/objstore-proxy.ts';
import { useFrozenDashboard } from './support/dashboard.ts';
import { timestampHtml } from './support/time.ts';

const dashboard = useFrozenDashboard();

const admin = () => inProcessApi(dashboard.lp);
const clock = async () => (await admin().get<{ now: string; frozen: boolean }>('/_localplane/clock')).body;
const acme = () => dashboard.fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;

/** A form post as htmx sends it (or as a plain browser form, `htmx: false`). */
async function post(path: string, form: Record<string, string> = {}, { htmx = true } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (htmx) headers['hx-request'] = 'true';
  const response = await dashboard.lp.request(path, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, html: await response.text() };
}

const page = async (path: string) => {
  const response = await dashboard.lp.request(path);
  return { status: response.status, html: await response.text() };
};

/** The cells of the due-work rows of that kind and state. */
const rowsOf = (html: string, kind: string, state: 'running' | 'queued' = 'queued') =>
  [...html.matchAll(new RegExp(`<tr data-kind="${kind}" data-state="${state}">(.*?)</tr>`, 'g'))].map(
    ([, row]) => row!,
  );

/** The message shown beside the refused field of that name, unescaped. */
const fieldErrorOf = (html: string, name: string) =>
  html
    .match(new RegExp(`id="invalid-${name}-error">([^<]*)<`))?.[1]
    ?.replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'");

/** The text of the element with role="alert", unescaped. */
const alertOf = (html: string) =>
  html
    .match(/role="alert">([^<]*)</)?.[1]
    ?.replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'");

describe('the Clock view', () => {
  it('shows now and whether the clock is frozen, with the button that changes it', async () => {
    const { status, html } = await page('/ui/clock');
    expect(status).toBe(200);
    expect(html).toContain('<a href="/ui/clock" aria-current="page">Clock</a>');
    expect(html).toContain(timestampHtml((await clock()).now, true));
    expect(html).toContain('>frozen</span>');
    expect(html).toContain('hx-post="/ui/clock/unfreeze"');

    const running = await post('/ui/clock/unfreeze');
    expect(running.status).toBe(200);
    expect((await clock()).frozen).toBe(false);
    expect(running.html).toContain('>running</span>');
    expect(running.html).not.toContain('<html');
    // A running clock's view follows it.
    expect(running.html).toContain('hx-trigger="every 2s"');

    expect((await post('/ui/clock/freeze')).html).toContain('>frozen</span>');
    expect((await clock()).frozen).toBe(true);
  });

  it.each([
    ['1m', 60],
    ['1h', 3600],
    ['1d', 86_400],
  ])('advances by the %s button', async (span, seconds) => {
    const before = Date.parse((await clock()).now);
    const { status, html } = await post('/ui/clock/advance', { span });
    expect(status).toBe(200);
    const { now } = await clock();
    expect(Date.parse(now) - before).toBe(seconds * 1000);
    expect(html).toContain(timestampHtml(now, true));
  });

  it('advances by a typed span', async () => {
    for (const [span, seconds] of [
      ['90s', 90],
      ['1d 3h', 97_200],
      ['1h30m', 5400],
      ['2.5 min', 150],
      ['45', 45],
      ['0', 0],
    ] as const) {
      const before = Date.parse((await clock()).now);
      expect((await post('/ui/clock/advance', { span })).status).toBe(200);
      expect(Date.parse((await clock()).now) - before, span).toBe(seconds * 1000);
    }
  });

  it('says what it cannot read in a span, at the span field, and leaves the clock alone', async () => {
    const before = (await clock()).now;
    const refused = await post('/ui/clock/advance', { span: '2x' });
    expect(refused.status).toBe(200);
    expect(fieldErrorOf(refused.html, 'span')).toBe('Unknown unit "x" in "2x": use s, m, h or d.');
    // The form comes back out of band, the span as typed, marked.
    expect(refused.html).toMatch(/<form id="clock-advance"[^>]*hx-swap-oob="true"/);
    expect(refused.html).toMatch(/<input name="span" required="" value="2x"[^>]*aria-invalid="true"/);
    const noUnit = await post('/ui/clock/advance', { span: '1h 30' });
    expect(fieldErrorOf(noUnit.html, 'span')).toMatch(/^"30" in "1h 30" has no unit/);
    const soon = await post('/ui/clock/advance', { span: 'soon' });
    expect(fieldErrorOf(soon.html, 'span')).toMatch(/^Cannot read "soon" in "soon"/);
    expect(fieldErrorOf((await post('/ui/clock/advance', { span: ' ' })).html, 'span')).toMatch(/^Type a span/);
    expect((await clock()).now).toBe(before);
    // A plain form post (no htmx) gets the whole page, with the refusal's status, the field marked and focused.
    const plain = await post('/ui/clock/advance', { span: '2x' }, { htmx: false });
    expect(plain.status).toBe(422);
    expect(plain.html).toContain('<html');
    expect(fieldErrorOf(plain.html, 'span')).toBe('Unknown unit "x" in "2x": use s, m, h or d.');
    expect(plain.html).toMatch(/<input name="span"[^>]*id="invalid-span" aria-invalid="true"[^>]*autofocus=""/);
  });

  it('answers a body that is no form with 400, as the API words it, not a 5xx', async () => {
    for (const path of ['/ui/clock/advance', '/ui/clock/set']) {
      const response = await dashboard.lp.request(path, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        body: '--x\r\nbroken',
      });
      expect(response.status, path).toBe(400);
      expect(alertOf(await response.text())).toBe('There was an error parsing the body');
    }
  });

  it("shows the API's refusal of a span it cannot take", async () => {
    const refused = await post('/ui/clock/advance', { span: '100000000d' });
    expect(fieldErrorOf(refused.html, 'span')).toMatch(/^The clock cannot go past /);
  });

  it("sets the clock to a time, and shows the API's words for one it cannot read", async () => {
    const { html } = await post('/ui/clock/set', { time: '2030-01-02T03:04:05Z' });
    expect((await clock()).now).toBe('2030-01-02T03:04:05.000000+00:00');
    expect(html).toContain(
      '<time class="timestamp" datetime="2030-01-02T03:04:05.000Z" data-format="datetime-ms">' +
        '2030-01-02 03:04:05.000 UTC</time>',
    );
    const refused = await post('/ui/clock/set', { time: 'next tuesday' });
    expect(refused.status).toBe(200);
    expect(fieldErrorOf(refused.html, 'time')).toMatch(/^Input should be a valid datetime/);
    expect(refused.html).toMatch(/<input name="time" required="" value="next tuesday"[^>]*aria-invalid="true"/);
    const plain = await post('/ui/clock/set', { time: 'next tuesday' }, { htmx: false });
    expect(plain.status).toBe(422);
    expect(plain.html).toMatch(/<input name="time"[^>]*id="invalid-time" aria-invalid="true"[^>]*autofocus=""/);
    expect((await clock()).now).toBe('2030-01-02T03:04:05.000000+00:00');
  });
});

describe('the due work on the Clock view', () => {
  it('names the revision that moves, linked to its deployment, from which status to which, when and in how long', async () => {
    const created = (
      await inProcessApi(dashboard.lp, acme()).post(
        '/v2/deployments',
        codehostDeploymentBody(acme() as never, 'clock-view-due'),
      )
    ).body;
    const revisionId = created.latest_revision_id as string;
    const tasks = (await admin().get('/_localplane/tasks')).body as { due_at: string; revision_id?: string }[];
    const task = tasks.find((candidate) => candidate.revision_id === revisionId)!;
    const { html } = await page('/ui/clock');
    const row = rowsOf(html, 'revision_step').find((cells) => cells.includes(`#revision-${revisionId}`));
    expect(row).toBeDefined();
    expect(row).toContain('Revision moves from CREATING to QUEUED');
    expect(row).toContain(
      `href="/ui/deployments/${created.id}?workspace_id=${acme().id}#revision-${revisionId}">deployment ` +
        `clock-view-due</a>`,
    );
    expect(row).toContain(`<td class="mono">${timestampHtml(task.due_at)}</td><td>in 1s</td>`);
    expect(row).toContain(`<td>${acme().name}</td>`);
    // One row per task the API lists.
    expect(html.match(/<tr data-kind=/g)).toHaveLength(tasks.length);
  });

  it('drives a revision to DEPLOYED from the advance action, and shows the due work after it', async () => {
    const client = inProcessApi(dashboard.lp, acme());
    const created = (await client.post('/v2/deployments', codehostDeploymentBody(acme() as never, 'clock-view-deploy')))
      .body;
    const revision = () =>
      client
        .get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)
        .then((reply) => reply.body.status as string);
    expect(await revision()).toBe('CREATING');
    const { html } = await post('/ui/clock/advance', { span: '10s' });
    expect(await revision()).toBe('DEPLOYED');
    // The due work comes back with the clock (out of band), without the revision that arrived.
    expect(html).toContain('<section id="due-work" aria-labelledby="due-work-title" hx-swap-oob="true">');
    expect(html).not.toContain(`#revision-${created.latest_revision_id}`);
    const detail = await page(`/ui/deployments/${created.id}?workspace_id=${acme().id}`);
    expect(detail.html).toMatch(new RegExp(`<tr id="revision-${created.latest_revision_id}" data-status="DEPLOYED">`));
  });
});

describe('running due work from the Clock view', () => {
  /** The items of the list of tasks that ran. */
  const ranOf = (html: string) => [...html.matchAll(/<li data-kind="([^"]+)">(.*?)<\/li>/g)].map(([, kind]) => kind);

  it('advances to the next task, runs it and names it', async () => {
    const created = (
      await inProcessApi(dashboard.lp, acme()).post(
        '/v2/deployments',
        codehostDeploymentBody(acme() as never, 'clock-next'),
      )
    ).body;
    const tasks = (await admin().get('/_localplane/tasks')).body as { due_at: string; deployment_id?: string }[];
    // The soonest due time, and every task due then (the fixtures' deployments have revisions on their way too).
    const due = tasks.filter((task) => task.due_at === tasks[0]!.due_at);
    expect(due.map((task) => task.deployment_id)).toContain(created.id);
    const { status, html } = await post('/ui/clock/advance-to-next');
    expect(status).toBe(200);
    expect((await clock()).now).toBe(due[0]!.due_at);
    expect(html).toContain(`Advanced to the next task: ${due.length} ran.`);
    expect(ranOf(html)).toEqual(due.map(() => 'revision_step'));
    expect(html).toContain(
      `Revision moves from CREATING to QUEUED · <a href="/ui/deployments/${created.id}?workspace_id=${acme().id}` +
        '#revision-',
    );
    expect((await admin().get('/_localplane/tasks')).body).not.toContainEqual(due[0]);
  });

  it('runs until idle, listing every task that ran in order, and says when none was due', async () => {
    const client = inProcessApi(dashboard.lp, acme());
    const created = (await client.post('/v2/deployments', codehostDeploymentBody(acme() as never, 'clock-idle'))).body;
    const { html } = await post('/ui/clock/run-until-idle', { within: '' });
    expect((await admin().get('/_localplane/tasks')).body).toEqual([]);
    expect(
      (await client.get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)).body.status,
    ).toBe('DEPLOYED');
    const ran = ranOf(html);
    expect(ran.length).toBeGreaterThanOrEqual(6);
    expect(new Set(ran)).toEqual(new Set(['revision_step']));
    expect(html).toContain(`Ran until idle: ${ran.length} ran.`);
    expect((await post('/ui/clock/run-until-idle', { within: '1h' })).html).toContain(
      'Ran until idle: no task was due.',
    );
  });

  it("refuses a span it cannot read, and shows the API's refusal of one too long", async () => {
    const before = await clock();
    expect(fieldErrorOf((await post('/ui/clock/run-until-idle', { within: 'soon' })).html, 'within')).toMatch(/soon/);
    const tooLong = await post('/ui/clock/run-until-idle', { within: '400d' });
    expect(fieldErrorOf(tooLong.html, 'within')).toMatch(/^within_seconds: /);
    const plain = await post('/ui/clock/run-until-idle', { within: '400d' }, { htmx: false });
    expect(plain.html).toMatch(/<input name="within" value="400d"[^>]*aria-invalid="true"[^>]*autofocus=""/);
    expect(await clock()).toEqual(before);
  });
});

describe('the due work of exports and deletions on the Clock view', () => {
  /**
   * An export of a day of the fixtures' support-bot-staging, to a destination served at `endpointUrl`; answers its id.
   */
  async function startExport(prefix: string, endpointUrl: string) {
    const workspace = inProcessApi(dashboard.lp, acme());
    const key = dashboard.fixtures.objstore.keys.find((candidate) =>
      ['create', 'delete', 'get'].every((permission) => candidate.permissions.includes(permission)),
    )!;
    const destination = await workspace.post('/api/v1/bulk-exports/destinations', {
      display_name: prefix,
      config: { bucket_name: dashboard.fixtures.objstore.buckets[0], prefix, endpoint_url: endpointUrl },
      credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
    });
    expect(destination.status, destination.text).toBe(200);
    const session = acme().sessions.find((candidate) => candidate.name === 'support-bot-staging')!;
    const created = await workspace.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: session.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    expect(created.status, created.text).toBe(200);
    return created.body.id as string;
  }

  it('names the dispatch, the run that starts or retries, linked to its export, and the deletion that completes', async () => {
    const workspace = inProcessApi(dashboard.lp, acme());
    await admin().post('/_localplane/faults/export-runs', { mode: 'fail', count: 1, attempts: 1 });
    const exportId = await startExport('clock-view', dashboard.fixtures.objstore.endpoint_url);

    const dispatching = (await page('/ui/clock')).html;
    expect(rowsOf(dispatching, 'export_dispatch')).toEqual([
      expect.stringContaining(`<a href="/ui/exports?workspace_id=${acme().id}">exports of the workspace</a>`),
    ]);
    expect(rowsOf(dispatching, 'export_dispatch')[0]).toContain(
      'The workspace&#39;s waiting exports and runs start, as the limits allow',
    );

    await post('/ui/clock/advance', { span: '0' });
    const [run] = (await workspace.get(`/api/v1/bulk-exports/${exportId}/runs`)).body as { id: string }[];
    const retrying = (await page('/ui/clock')).html;
    const [step] = rowsOf(retrying, 'export_run_step');
    expect(step).toContain('Export run retries (attempt 2)');
    expect(step).toContain(
      `<a href="/ui/exports/${exportId}?workspace_id=${acme().id}#run-${run!.id}">` +
        `export ${exportId.slice(0, 8)}</a><span class="mono"> · run ${run!.id.slice(0, 8)}</span>`,
    );
    expect(rowsOf(retrying, 'export_run_time_limit')[0]).toContain(
      'Export run reaches its time limit: TimedOut if still running',
    );
    expect(rowsOf(retrying, 'export_time_limit')[0]).toContain(
      'Export reaches its time limit: TimedOut if still running',
    );

    await admin().patch('/_localplane/config', { deployment_deletion_seconds: 90 });
    const deployment = (
      await workspace.post('/v2/deployments', codehostDeploymentBody(acme() as never, 'clock-view-deletion'))
    ).body;
    expect((await workspace.delete(`/v2/deployments/${deployment.id}`)).status).toBe(204);
    const [deletion] = rowsOf((await page('/ui/clock')).html, 'deployment_deletion');
    expect(deletion).toContain('Deletion completes: the deployment is gone');
    expect(deletion).toContain(
      `href="/ui/deployments/${deployment.id}?workspace_id=${acme().id}">deployment clock-view-deletion</a>`,
    );
    expect(deletion).toContain('<td>in 1m 30s</td>');
  });

  it('shows the run step in flight first, running since its start, and the queued work after it', async () => {
    const proxy = await startObjstoreProxy(await dashboard.lp.objstoreEndpoint());
    try {
      const exportId = await startExport('clock-view-running', proxy.url);
      proxy.arm({ kind: 'hold' }, parquetUpload);
      const { now } = await clock();
      // The proxy holds the first step's upload; the next step, due at once, waits for it, and so does the advance.
      const advancing = dashboard.lp.clock.advance(0);
      // The first step is in flight for a moment too, while it encodes the file.
      const nextStepRunning = async () =>
        rowsOf((await page('/ui/clock')).html, 'export_run_step', 'running').find((row) =>
          row.includes('writes its next file'),
        );
      const step = await eventually(nextStepRunning, 'the next step in flight');
      expect(step).toContain(`<a href="/ui/exports/${exportId}?workspace_id=${acme().id}#run-`);
      const since =
        '<span class="badge task-running">running</span> since ' + `<span class="mono">${timestampHtml(now)}</span>`;
      expect(step).toContain(`<td>${since}</td><td>now</td>`);
      const { html } = await page('/ui/clock');
      const states = [...html.matchAll(/<tr data-kind="[a-z_]+" data-state="([a-z]+)">/g)].map(([, state]) => state);
      // Only the first row runs; the others are queued, the run's time limit among them.
      expect(states).toEqual(['running', ...states.slice(1).map(() => 'queued')]);
      expect(rowsOf(html, 'export_run_time_limit')).toHaveLength(1);

      proxy.release();
      await advancing;
      expect((await page('/ui/clock')).html).not.toContain('data-state="running"');
    } finally {
      proxy.release();
      await proxy.close();
    }
  });
});

describe('typed spans', () => {
  it('read as seconds, or as an error that names what could not be read', () => {
    expect(parseSpan('90s')).toEqual({ seconds: 90 });
    expect(parseSpan('2h')).toEqual({ seconds: 7200 });
    expect(parseSpan('1d 3h')).toEqual({ seconds: 97_200 });
    expect(parseSpan('1 day, 2 hours, 3 minutes, 4 seconds')).toEqual({ seconds: 93_784 });
    expect(parseSpan('1H30M')).toEqual({ seconds: 5400 });
    expect(parseSpan('0.5s')).toEqual({ seconds: 0.5 });
    expect(parseSpan('-1h')).toEqual({ error: expect.stringMatching(/^Cannot read "-1h"/) });
    expect(parseSpan('3 fortnights')).toEqual({ error: expect.stringMatching(/^Unknown unit "fortnights"/) });
  });
});
