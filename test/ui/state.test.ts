/**
 * The State view (/ui/state) as app.request() sees it: the page and its panel, and each action
 * (reset everything or one workspace, save, restore, delete, upload and restore) done through
 * the API, checked through the API; refusals shown as the API's detail in role="alert".
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { inProcessApi } from '../support/in-process.ts';
import { credentialsOf, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';
import { useFrozenDashboard } from './support/dashboard.ts';
import { timestampHtml } from './support/time.ts';

const dashboard = useFrozenDashboard();

beforeEach(async () => {
  for (const { name } of (
    await inProcessApi(dashboard.lp).get<{ snapshots: { name: string }[] }>('/_localplane/snapshots')
  ).body.snapshots) {
    await inProcessApi(dashboard.lp).delete(`/_localplane/snapshots/${name}`);
  }
});

/** A multipart form as a browser sends it: its bytes with their Content-Length. */
async function asBrowserSends(
  form: FormData,
): Promise<{ headers: Record<string, string>; body: Uint8Array<ArrayBuffer> }> {
  const encoded = new Request('http://localhost/', { method: 'POST', body: form });
  const body = new Uint8Array(await encoded.arrayBuffer());
  return {
    headers: {
      'hx-request': 'true',
      'content-type': encoded.headers.get('content-type')!,
      'content-length': String(body.byteLength),
    },
    body,
  };
}

/** The State page, whole. */
async function okPanel(): Promise<string> {
  const response = await dashboard.lp.request('/ui/state');
  expect(response.status).toBe(200);
  return response.text();
}

/** A form posted as htmx posts it: the panel comes back. */
async function post(action: string, fields: Record<string, string>): Promise<string> {
  const response = await dashboard.lp.request(`/ui/state/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    body: new URLSearchParams(fields).toString(),
  });
  expect(response.status).toBe(200);
  return response.text();
}

const plus = () => workspaceByTier(dashboard.fixtures, 'plus');
const enterprise = () => workspaceByTier(dashboard.fixtures, 'enterprise');

async function addDestination(workspace: FixturesView['workspaces'][number], name: string): Promise<void> {
  const reply = await inProcessApi(dashboard.lp, workspace).post('/api/v1/bulk-exports/destinations', {
    display_name: name,
    config: {
      bucket_name: dashboard.fixtures.objstore.buckets[0],
      prefix: name,
      endpoint_url: dashboard.fixtures.objstore.endpoint_url,
    },
    credentials: credentialsOf(fullKey(dashboard.fixtures)),
  });
  expect(reply.status, reply.text).toBe(200);
}

async function destinationsOf(workspace: FixturesView['workspaces'][number]): Promise<string[]> {
  return (
    await inProcessApi(dashboard.lp, workspace).get<{ display_name: string }[]>('/api/v1/bulk-exports/destinations')
  ).body.map((row) => row.display_name);
}

const savedNames = async () =>
  (
    await inProcessApi(dashboard.lp).get<{ snapshots: { name: string }[] }>('/_localplane/snapshots')
  ).body.snapshots.map((saved) => saved.name);

describe('the State view at /ui/state', () => {
  it(
    'is a whole page: a reset of everything or of each workspace, a save with a name from the clock, the saved ' +
      'snapshots with their size, time and actions, an upload',
    async () => {
      expect((await inProcessApi(dashboard.lp).post('/_localplane/snapshot', { name: 'listed.snapshot' })).status).toBe(
        200,
      );
      const response = await dashboard.lp.request('/ui/state');
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).toContain('<title>State · localplane</title>');
      expect(page).toContain('<a href="/ui/state" aria-current="page">State</a>');
      expect(page).toContain('<option value="">Everything (state, objstore, knobs, clock)</option>');
      for (const workspace of dashboard.fixtures.workspaces)
        expect(page).toContain(
          `<option value="${workspace.id}">Workspace ${workspace.name} (${workspace.tier}) only</option>`,
        );
      const { now } = (await inProcessApi(dashboard.lp).get('/_localplane/clock')).body as { now: string };
      expect(page).toContain(`value="${now.slice(0, 19).replaceAll(':', '-')}.snapshot"`);
      const [saved] = (await inProcessApi(dashboard.lp).get('/_localplane/snapshots')).body.snapshots as {
        bytes: number;
        modified_at: string;
      }[];
      expect(page).toContain('<th scope="row" class="mono">listed.snapshot</th>');
      expect(page).toContain(`<td class="num">${(saved!.bytes / 1024).toFixed(1)} KiB</td>`);
      expect(page).toContain(timestampHtml(saved!.modified_at));
      expect(page).toContain(
        '<a href="/_localplane/snapshots/listed.snapshot" download="listed.snapshot">Download listed.snapshot</a>',
      );
      expect(page).toContain(`In <span class="mono">${dashboard.lp.snapshotsDir}</span>`);
      expect(page).toContain('<input type="file" name="file" required=""/>');
      // Every field has a label around it.
      expect(page.match(/<(input|select)(?![^>]*type="hidden")/g)?.length).toBe(
        page.match(/<label>[^<]*<(input|select)/g)?.length,
      );
    },
  );

  it(
    'asks for confirmation before each destructive action: reset, restore, delete, upload and restore; not ' +
      'before a save',
    async () => {
      expect(
        (await inProcessApi(dashboard.lp).post('/_localplane/snapshot', { name: 'confirmed.snapshot' })).status,
      ).toBe(200);
      const page = await (await dashboard.lp.request('/ui/state')).text();
      const confirmOf = (action: string) =>
        new RegExp(`hx-post="/ui/state/${action}"[^>]*hx-confirm="([^"]+)"`).exec(page)?.[1];
      expect(confirmOf('reset')).toBe('Reset to the seed? What is not saved in a snapshot is lost.');
      expect(confirmOf('restore')).toBe(
        'Replace the whole state with confirmed.snapshot? What is not saved in a snapshot is lost.',
      );
      expect(confirmOf('delete')).toBe('Delete the saved snapshot confirmed.snapshot?');
      expect(confirmOf('upload')).toMatch(/^Upload this file and replace the whole state with it\?/);
      expect(confirmOf('snapshot')).toBeUndefined();
    },
  );

  it('answers htmx with the panel alone', async () => {
    const fragment = await (await dashboard.lp.request('/ui/state', { headers: { 'hx-request': 'true' } })).text();
    expect(fragment.startsWith('<div id="state-panel">')).toBe(true);
    expect(fragment).not.toContain('<html');
  });

  it('saves a snapshot, restores it after a change and deletes it, through the API', async () => {
    await addDestination(plus(), 'before-the-save');
    const saved = await post('snapshot', { name: 'by-the-dashboard.snapshot' });
    expect(saved).toMatch(
      new RegExp(
        String.raw`<p class="notice" role="status" tabindex="-1" autofocus="">` +
          String.raw`Saved by-the-dashboard\.snapshot \(\d+\.\d KiB\)\.<\/p>`,
      ),
    );
    expect(saved).toContain('<th scope="row" class="mono">by-the-dashboard.snapshot</th>');
    expect(await savedNames()).toEqual(['by-the-dashboard.snapshot']);

    await addDestination(plus(), 'after-the-save');
    const restored = await post('restore', { name: 'by-the-dashboard.snapshot' });
    expect(restored).toContain('Restored by-the-dashboard.snapshot.');
    expect(await destinationsOf(plus())).toEqual(['before-the-save']);

    const deleted = await post('delete', { name: 'by-the-dashboard.snapshot' });
    expect(deleted).toContain('Deleted by-the-dashboard.snapshot.');
    expect(deleted).toContain('No saved snapshot yet.');
    expect(await savedNames()).toEqual([]);
  });

  it('resets one workspace, leaving the others, or everything', async () => {
    await addDestination(plus(), 'plus-destination');
    await addDestination(enterprise(), 'enterprise-destination');
    const one = await post('reset', { workspace_id: plus().id });
    expect(one).toContain(`Workspace ${plus().name} is back to the seed.`);
    expect(await destinationsOf(plus())).toEqual([]);
    expect(await destinationsOf(enterprise())).toEqual(['enterprise-destination']);

    const all = await post('reset', { workspace_id: '' });
    expect(all).toContain('Everything is back to the seed.');
    expect(await destinationsOf(enterprise())).toEqual([]);
  });

  it(
    'uploads a file under its own name (or the one given) and restores it; a damaged one is refused, kept ' +
      'nowhere, and the state stays',
    async () => {
      await addDestination(plus(), 'in-the-file');
      expect((await inProcessApi(dashboard.lp).post('/_localplane/snapshot', { name: 'source.snapshot' })).status).toBe(
        200,
      );
      const bytes = readFileSync(join(dashboard.lp.snapshotsDir, 'source.snapshot'));
      await inProcessApi(dashboard.lp).delete('/_localplane/snapshots/source.snapshot');
      await dashboard.lp.reset();

      const upload = async (fileName: string, content: Uint8Array, saveAs = '') => {
        const form = new FormData();
        form.set('file', new File([content as Uint8Array<ArrayBuffer>], fileName));
        form.set('name', saveAs);
        const response = await dashboard.lp.request('/ui/state/upload', {
          method: 'POST',
          ...(await asBrowserSends(form)),
        });
        expect(response.status).toBe(200);
        return response.text();
      };
      const byFileName = await upload('state from my laptop (1).snapshot', bytes);
      expect(byFileName).toContain('Uploaded state-from-my-laptop-1-.snapshot and restored it.');
      expect(await destinationsOf(plus())).toEqual(['in-the-file']);

      await dashboard.lp.reset();
      expect(await upload('whatever.bin', bytes, 'chosen.snapshot')).toContain(
        'Uploaded chosen.snapshot and restored it.',
      );
      expect(await destinationsOf(plus())).toEqual(['in-the-file']);
      expect((await savedNames()).sort()).toEqual(['chosen.snapshot', 'state-from-my-laptop-1-.snapshot']);

      await dashboard.lp.reset();
      const damaged = await upload('damaged.snapshot', bytes.subarray(0, 2000));
      expect(damaged).toMatch(
        new RegExp(
          String.raw`id="invalid-file-error">the upload &quot;damaged\.snapshot&quot; is not a usable ` +
            String.raw`localplane snapshot: it holds \d+ bytes of data, its header announces \d+<\/span>`,
        ),
      );
      expect(existsSync(join(dashboard.lp.snapshotsDir, 'damaged.snapshot'))).toBe(false);
      expect(await destinationsOf(plus())).toEqual([]);
      // The refusal at the file's field: marked, described by the message.
      expect(damaged).toMatch(/<input type="file" name="file"[^>]*id="invalid-file" aria-invalid="true"/);
      expect(damaged).toContain('aria-describedby="invalid-file-error"');
      expect(damaged).not.toContain('<p class="error" role="alert">');
      expect(await upload('empty.snapshot', new Uint8Array(0))).toContain(
        'id="invalid-file-error">Choose a snapshot file to upload.</span>',
      );
      // A name the API refuses at the name's field, as typed.
      const badName = await upload('x.snapshot', bytes, '.hidden');
      expect(badName).toMatch(/<input name="name" value=".hidden"[^>]*id="invalid-name" aria-invalid="true"/);
      expect(badName).toMatch(/id="invalid-name-error">[^<]+<\/span>/);
      expect(await savedNames()).not.toContain('.hidden');
    },
  );

  it('shows the API\'s refusal in role="alert" and changes nothing', async () => {
    await addDestination(plus(), 'kept');
    const badName = await post('snapshot', { name: '../outside.snapshot' });
    // At the name field, as typed, in plain words.
    expect(badName).toMatch(/<input name="name"[^>]*value="..\/outside.snapshot"[^>]*aria-invalid="true"/);
    expect(badName).toContain('id="invalid-name-error">A snapshot name is a plain file name');
    const missing = await post('restore', { name: 'missing.snapshot' });
    expect(missing).toContain(
      `<p class="error" role="alert">there is no saved snapshot named &quot;missing.snapshot&quot; ` +
        `in ${dashboard.lp.snapshotsDir}</p>`,
    );
    const unknownWorkspace = await post('reset', { workspace_id: 'not-a-workspace' });
    expect(unknownWorkspace).toContain('<p class="error" role="alert">body.workspace_id:');
    // A whole page (no htmx) answers with the API's status.
    const page = await dashboard.lp.request('/ui/state/restore', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=missing.snapshot',
    });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('<p class="error" role="alert">there is no saved snapshot named');
    expect(await destinationsOf(plus())).toEqual(['kept']);
    expect(await savedNames()).toEqual([]);
  });

  it('shows a snapshot name the API refuses at the name field, focused, on a whole page', async () => {
    const page = await dashboard.lp.request('/ui/state/snapshot', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=a%2Fb.snapshot',
    });
    expect(page.status).toBe(422);
    const html = await page.text();
    expect(html).toMatch(
      /<input name="name"[^>]*value="a\/b.snapshot"[^>]*id="invalid-name" aria-invalid="true"[^>]*autofocus=""/,
    );
    expect(html).toContain('<div class="error-summary" role="alert">');
    expect(html).not.toContain('<p class="error" role="alert">');
  });

  it("changes a workspace's plan, and shows the API's refusal of an unknown one", async () => {
    const developer = workspaceByTier(dashboard.fixtures, 'developer');
    const tierOf = async () =>
      (
        await inProcessApi(dashboard.lp).get<{ workspaces: { tier: string }[] }>(
          `/_localplane/state?workspace_id=${developer.id}`,
        )
      ).body.workspaces[0]!.tier;
    const html = await post('tier', { workspace_id: developer.id, tier: 'plus' });
    expect(html).toContain(`Workspace ${developer.name} is on the plus plan.`);
    expect(await tierOf()).toBe('plus');
    // The developer workspace's exports, refused before, are now allowed.
    expect((await inProcessApi(dashboard.lp, developer).get('/api/v1/bulk-exports')).status).toBe(200);
    const refused = await post('tier', { workspace_id: developer.id, tier: 'platinum' });
    expect(refused).toMatch(/<select name="tier" id="invalid-tier" aria-invalid="true"[^>]*autofocus="">/);
    expect(refused).toContain('<a href="#invalid-tier">Tier: ');
    // Only the plan of the workspace sent is marked.
    expect(refused.match(/aria-invalid="true"/g)).toHaveLength(1);
    expect(await tierOf()).toBe('plus');
  });

  it('shows the limits in force and changes those typed differently, nested ones too', async () => {
    const limits = async () =>
      (await inProcessApi(dashboard.lp).get<Record<string, unknown>>('/_localplane/config')).body as {
        export_rows_per_file: number;
        sql_row_limit: number;
        revision_step_seconds: Record<string, number>;
      };
    const before = await limits();
    const html = await okPanel();
    expect(html).toContain(
      `name="export_rows_per_file" type="number" step="any" value="${before.export_rows_per_file}"`,
    );
    expect(html).toContain('name="revision_step_seconds.BUILDING"');
    const fields = Object.fromEntries(
      [...html.matchAll(/<input name="([a-z_.A-Z]+)" type="number" step="any" value="([^"]*)"/g)].map(
        ([, name, value]) => [name!, value!],
      ),
    );
    const changed = await post('limits', {
      ...fields,
      export_rows_per_file: '1234',
      'revision_step_seconds.BUILDING': '7',
    });
    expect(changed).toContain('Changed export_rows_per_file, revision_step_seconds.BUILDING.');
    const after = await limits();
    expect(after).toEqual({
      ...before,
      export_rows_per_file: 1234,
      revision_step_seconds: { ...before.revision_step_seconds, BUILDING: 7 },
    });
    expect(
      await post('limits', { ...fields, export_rows_per_file: '1234', 'revision_step_seconds.BUILDING': '7' }),
    ).toContain('No limit changed.');
    const refused = await post('limits', { ...fields, sql_row_limit: '0', 'revision_step_seconds.BUILDING': '-1' });
    // Each at its field, as typed; the first has the focus.
    expect(refused).toMatch(/<input name="revision_step_seconds.BUILDING"[^>]*value="-1"[^>]*aria-invalid="true"/);
    expect(refused).toMatch(/id="invalid-revision_step_seconds.BUILDING" aria-invalid="true"[^>]*autofocus=""/);
    expect(refused).toMatch(
      /<input name="sql_row_limit"[^>]*value="0"[^>]*id="invalid-sql_row_limit" aria-invalid="true"/,
    );
    expect(refused).not.toContain('role="alert">body.');
    expect((await limits()).sql_row_limit).toBe(before.sql_row_limit);
  });

  it('refuses an upload form without a Content-Length or over the size of a snapshot file, unread', async () => {
    const declared = await dashboard.lp.request('/ui/state/upload', {
      method: 'POST',
      headers: {
        'hx-request': 'true',
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(2 * 1024 ** 3),
      },
      body: '--x--',
    });
    expect(await declared.text()).toContain(
      'id="invalid-file-error">The upload cannot be read: a snapshot file is at most 1 GiB.</span>',
    );
    const form = new FormData();
    form.set('file', new File(['x'], 'x.snapshot'));
    const unsized = await dashboard.lp.request('/ui/state/upload', {
      method: 'POST',
      headers: { 'hx-request': 'true' },
      body: form,
    });
    expect(await unsized.text()).toContain(
      'id="invalid-file-error">The upload cannot be read: it has no Content-Length.</span>',
    );
    expect(await savedNames()).toEqual([]);
  });
});
