/**
 * Uploading and deleting objects in the object browser, as app.request() sees it: a file posted in the bucket page's
 * upload form is stored under the folder shown (or the key typed) with its type and listed there; an object's page
 * deletes it after a confirmation and goes back to its folder; the API's refusals show at the form.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf } from '../support/in-process.ts';
import { fullKey } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';
import { HTMX, okPage, postForm } from './support/dashboard.ts';

let lp: InProcessLocalplane;
let s3: S3Client;
const BUCKET = 'warehouse-landing';
const CSV = 'id,name\n1,ada\n';

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  s3 = s3For(await lp.objstoreEndpoint(), fullKey(await fixturesOf(lp)));
});

afterAll(async () => {
  s3?.destroy();
  await lp?.stop();
});

/** The upload form posted as a browser posts it: multipart, with its Content-Length. */
async function upload(query: string, fields: Record<string, string | File>, headers: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const encoded = new Request('http://localhost/', { method: 'POST', body: form });
  const body = new Uint8Array(await encoded.arrayBuffer());
  return lp.request(`/ui/objects/${BUCKET}/upload${query}`, {
    method: 'POST',
    headers: {
      'content-type': encoded.headers.get('content-type')!,
      'content-length': String(body.length),
      ...headers,
    },
    body,
  });
}

const listedKeys = async (prefix: string) =>
  (await lp.objstore.objects(BUCKET, { prefix })).objects.map((object) => object.key);

describe('the upload form', () => {
  it('is on a bucket page, its key field holding the folder shown, marked with the PUT route', async () => {
    const html = await okPage(lp, `/ui/objects/${BUCKET}?prefix=incoming%2F`);
    expect(html).toContain('data-route="PUT /_localplane/objstore/buckets/:bucket/object"');
    expect(html).toContain('<input type="file" name="file" required=""');
    expect(html).toMatch(/<input name="key" value="incoming\/"/);
  });

  it('stores the file under the folder and its name, with its type, and lists it there', async () => {
    const reply = await upload('?prefix=incoming%2F', {
      key: 'incoming/',
      file: new File([CSV], 'people.csv', { type: 'text/csv' }),
    });
    expect(reply.status).toBe(303);
    expect(reply.headers.get('location')).toBe(`/ui/objects/${BUCKET}?prefix=incoming%2F`);
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'incoming/people.csv' }));
    expect(await got.Body!.transformToString()).toBe(CSV);
    expect(got.ContentType).toBe('text/csv');
    const listing = await okPage(lp, reply.headers.get('location')!);
    expect(listing).toContain(`href="/ui/objects/${BUCKET}/object?key=incoming%2Fpeople.csv"`);
  });

  it('stores the file under a whole key typed', async () => {
    const reply = await upload('', { key: 'renamed/rows.csv', file: new File([CSV], 'people.csv') });
    expect(reply.status).toBe(303);
    expect(await listedKeys('renamed/')).toEqual(['renamed/rows.csv']);
  });

  it("shows the API's refusal of a key over 1024 bytes at the key field, keeping the key typed", async () => {
    const key = `long/${'k'.repeat(1030)}`;
    const reply = await upload('', { key, file: new File([CSV], 'people.csv') }, HTMX);
    expect(reply.status).toBe(200);
    const html = await reply.text();
    const field = html.match(/<input name="key"[^>]*>/)![0];
    expect(field).toContain(`value="${key}"`);
    expect(field).toContain('id="invalid-key" aria-invalid="true"');
    expect(field).toContain('aria-describedby="invalid-key-error"');
    expect(html).toMatch(/id="invalid-key-error">An object key is at most 1024 bytes/);
    expect(html).not.toContain('<p class="error" role="alert">');
    expect(await listedKeys('long/')).toEqual([]);
    // A plain form: the API's status, the field with the focus.
    const plain = await upload('', { key, file: new File([CSV], 'people.csv') });
    expect(plain.status).toBe(422);
    expect(await plain.text()).toMatch(/<input name="key"[^>]*aria-invalid="true"[^>]*autofocus=""/);
  });

  it('asks for a file at the file field when none was chosen', async () => {
    const reply = await upload('', { key: '', file: new File([], '') });
    expect(reply.status).toBe(400);
    const html = await reply.text();
    expect(html).toMatch(/<input type="file" name="file"[^>]*id="invalid-file" aria-invalid="true"/);
    expect(html).toContain('id="invalid-file-error">Choose a file to upload.</span>');
  });
});

describe("an object's Delete button", () => {
  it('confirms, deletes the object and goes back to its folder', async () => {
    await lp.objstore.putObject(BUCKET, 'trash/old.csv', new TextEncoder().encode(CSV));
    const html = await okPage(lp, `/ui/objects/${BUCKET}/object?key=trash%2Fold.csv`);
    expect(html).toContain('data-route="DELETE /_localplane/objstore/buckets/:bucket/object"');
    expect(html).toContain(`hx-confirm="Delete trash/old.csv from ${BUCKET}?`);

    const reply = await postForm(lp, `/ui/objects/${BUCKET}/delete?prefix=trash%2F`, { key: 'trash/old.csv' });
    expect(reply.status).toBe(303);
    expect(reply.headers.get('location')).toBe(`/ui/objects/${BUCKET}?prefix=trash%2F`);
    expect(await listedKeys('trash/')).toEqual([]);
  });

  it("shows the API's 404 for an object already gone", async () => {
    const reply = await postForm(lp, `/ui/objects/${BUCKET}/delete?prefix=trash%2F`, { key: 'trash/never.csv' });
    expect(reply.status).toBe(404);
    expect(await reply.text()).toContain(`Object trash/never.csv not found in bucket ${BUCKET}`);
  });
});
