/**
 * What the object browser does besides browsing, as app.request() sees it: an export's file links to its export and to
 * SQL over its partition, with copies of its key and S3 URI; long keys break at their folders; the objstore's key pairs
 * listed, added and revoked, with the API's refusals.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { partitionQuery } from '../../src/ui/views/objects.tsx';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { fullKey, type FixturesView } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';
import { HTMX, okPage, postForm } from './support/dashboard.ts';

let lp: InProcessLocalplane;
let s3: S3Client;
let fixtures: FixturesView;
const BUCKET = 'warehouse-landing';
const EXPORT_ID = '5d0c2b9e-8f7a-4c1d-a3b2-9e8f7a6b5c4d';
const KEY =
  `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/resource=runs/year=2026/month=11/day=2/` + 'runs-0.parquet';

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  fixtures = await fixturesOf(lp);
  s3 = s3For(await lp.objstoreEndpoint(), fullKey(fixtures));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: 'bytes' }));
});

afterAll(async () => {
  await lp?.stop();
});

const attribute = (html: string, pattern: RegExp) => pattern.exec(html)?.[1]?.replaceAll('&amp;', '&');

describe("an object's page", () => {
  it('links an export file to its export and to SQL over its partition, and copies its key and S3 URI', async () => {
    const html = await okPage(lp, `/ui/objects/${BUCKET}/object?key=${encodeURIComponent(KEY)}`);
    expect(html).toContain(`<button type="button" data-copy="${KEY}">Copy key</button>`);
    expect(html).toContain(`<button type="button" data-copy="s3://${BUCKET}/${KEY}">Copy S3 URI</button>`);
    expect(html).toContain(`<a href="/ui/exports/${EXPORT_ID}" hx-boost="false">The export that wrote it</a>`);
    const sql = new URL(attribute(html, /<a href="([^"]+)" hx-boost="false">Query in SQL<\/a>/)!, 'http://x');
    expect(sql.pathname).toBe('/ui/sql');
    expect(sql.searchParams.get('export_id')).toBe(EXPORT_ID);
    expect(sql.searchParams.get('sql')).toBe(
      "SELECT *\nFROM runs\nWHERE session_id = 's1' AND year = 2026 AND month = 11 AND day = 2\nLIMIT 100",
    );
  });

  it('offers no export links for an object no export wrote', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'notes/readme.txt', Body: 'hello' }));
    const html = await okPage(lp, `/ui/objects/${BUCKET}/object?key=notes%2Freadme.txt`);
    expect(html).toContain('Copy key');
    expect(html).not.toContain('The export that wrote it');
    expect(html).not.toContain('Query in SQL');
  });

  it('quotes a partition value that is no number', () => {
    expect(partitionQuery("a/session_id=it's/day=3/f.parquet")).toBe(
      "SELECT *\nFROM runs\nWHERE session_id = 'it''s' AND day = 3\nLIMIT 100",
    );
  });
});

describe('long keys', () => {
  it('break after each / in the listing and the metadata', async () => {
    const key = `deep/${'a'.repeat(60)}/${'b'.repeat(60)}/${'c'.repeat(60)}.txt`;
    expect(key.length).toBeGreaterThanOrEqual(190);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
    const found = await okPage(lp, `/ui/objects/${BUCKET}?search=${'c'.repeat(10)}`);
    expect(found).toContain(`>deep/<wbr/>${'a'.repeat(60)}/<wbr/>${'b'.repeat(60)}/<wbr/>${'c'.repeat(60)}.txt</a>`);
    expect(found).toContain('<table aria-label="Keys found" class="objects">');
  });
});

describe('key pairs at /ui/objects', () => {
  const keys = async () =>
    (await inProcessApi(lp).get<{ access_key_id: string; permissions: string[] }[]>('/_localplane/objstore/keys')).body;

  it('lists the key pairs without their secrets, adds one from the form and revokes it', async () => {
    const html = await okPage(lp, '/ui/objects');
    for (const key of fixtures.objstore.keys) {
      expect(html).toContain(`<th scope="row" class="mono">${key.access_key_id}</th>`);
      expect(html).not.toContain(key.secret_access_key);
    }
    const body = new URLSearchParams({ access_key_id: 'UIKEY0001', secret_access_key: 'ui-secret-0001' });
    body.append('permissions', 'get');
    body.append('permissions', 'create');
    const added = await lp.request('/ui/objects/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    expect(added.status, await added.clone().text()).toBe(303);
    expect((await keys()).find((key) => key.access_key_id === 'UIKEY0001')?.permissions).toEqual(['get', 'create']);
    const listed = await okPage(lp, '/ui/objects');
    expect(listed).toContain('<th scope="row" class="mono">UIKEY0001</th>');
    expect(listed).not.toContain('ui-secret-0001');
    expect(listed).toContain('hx-confirm="Revoke the key pair UIKEY0001?');

    // The same id again: the API's 409, shown at the id field with what was typed (never the secret), focused.
    const again = await postForm(lp, '/ui/objects/keys', {
      access_key_id: 'UIKEY0001',
      secret_access_key: 'ui-secret-0002',
      permissions: 'get',
    });
    expect(again.status).toBe(409);
    const refused = await again.text();
    expect(refused).toContain('id="invalid-access_key_id-error">Objstore key UIKEY0001 already exists</span>');
    expect(refused).toContain(
      '<input name="access_key_id" value="UIKEY0001" required="" id="invalid-access_key_id" aria-invalid="true"',
    );
    expect(refused).toMatch(/id="invalid-access_key_id" aria-invalid="true"[^>]*autofocus=""/);
    expect(refused).not.toContain('ui-secret-0002');

    // Revoked as htmx posts it (boosted): the page part comes back, without the key.
    const revoked = await postForm(lp, '/ui/objects/keys/UIKEY0001/delete', {}, HTMX);
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).not.toContain('UIKEY0001');
    expect((await keys()).map((key) => key.access_key_id)).not.toContain('UIKEY0001');
    const gone = await postForm(lp, '/ui/objects/keys/UIKEY0001/delete', {});
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain('role="alert">Objstore key UIKEY0001 not found</p>');
  });
});
