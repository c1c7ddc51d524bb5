/**
 * The objstore refuses what a page on another site sends it (issue 35), in Chromium: the fixture
 * keys are published, so a page could sign with them, and S3 would process a form post or a
 * no-cors request even where the browser hides the answer. A browser's request (Origin, or
 * Sec-Fetch-Site other than none and same-origin) passes only when the bucket's CORS configuration
 * allows its origin and method, as a page the user serves and names in PutBucketCors does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBrowser } from '../support/browser.ts';
import { credentialsOf, fullKey, useLocalplane } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';
import { presignedPath } from '../support/signed-requests.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();
/** A bucket of the test's key's own, which may set its CORS configuration. */
const BUCKET = 'cross-site-pages';

/** Another site's page (another port of loopback), whose body the test sets. */
let site: Server;
let siteOrigin: string;
let pageBody = '';
beforeAll(async () => {
  site = createServer((_, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>elsewhere</title>${pageBody}`),
  );
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
});

let s3: S3Client;
const credentials = () => {
  const { access_key_id, secret_access_key } = credentialsOf(fullKey(ctx.fixtures));
  return { accessKeyId: access_key_id, secretAccessKey: secret_access_key };
};
const presigned = async (method: string, key: string, query: Record<string, string> = {}) => {
  const path = `/${BUCKET}/${key}`.replace(/\/$/, '');
  const signed = await presignedPath(ctx.instance.objstoreUrl, credentials(), { method, path, query, expiresIn: 600 });
  return `${ctx.instance.objstoreUrl}${signed}`;
};
const content = async (key: string) => {
  try {
    return await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();
  } catch {
    return null;
  }
};

/**
 * Opens the other site's page with `body` and answers the objstore's statuses of the requests it sent (preflights
 * aside), and the page.
 */
async function open(body: string, requests: number) {
  pageBody = body;
  const page = await browser.newPage();
  const statuses: number[] = [];
  page.on('response', (response) => {
    if (response.url().startsWith(ctx.instance.objstoreUrl) && response.request().method() !== 'OPTIONS')
      statuses.push(response.status());
  });
  await page.goto(siteOrigin);
  await expect.poll(() => statuses.length).toBe(requests);
  return { statuses, page };
}

const visit = async (body: string, requests: number) => (await open(body, requests)).statuses;

describe('a page on another site', () => {
  beforeAll(async () => {
    s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  });

  it('cannot delete with a presigned POST ?delete sent as text/plain', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cross-site/victim.txt', Body: 'keep me' }));
    const url = await presigned('POST', '', { delete: '' });
    const xml = '<Delete><Object><Key>cross-site/victim.txt</Key></Object></Delete>';
    expect(
      await visit(
        `<script>fetch(${JSON.stringify(url)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': ` +
          `'text/plain' }, body: ${JSON.stringify(xml)} })</script>`,
        1,
      ),
    ).toEqual([403]);
    expect(await content('cross-site/victim.txt')).toBe('keep me');
  });

  it('cannot write with a POST-policy form signed with a published key', async () => {
    const post = await createPresignedPost(s3, { Bucket: BUCKET, Key: 'cross-site/planted.html' });
    const fields = Object.entries(post.fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
      .join('');
    const form =
      `<form id="f" method="post" enctype="multipart/form-data" ` +
      `action="${post.url}">${fields}<textarea ` +
      `name="file">&lt;script&gt;alert(1)&lt;/script&gt;</textarea></form><script>f.submit()</script>`;
    expect(await visit(form, 1)).toEqual([403]);
    expect(await content('cross-site/planted.html')).toBeNull();
  });

  it('cannot read an object with a no-cors fetch of a presigned URL', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cross-site/private.txt', Body: 'private' }));
    const url = await presigned('GET', 'cross-site/private.txt');
    expect(await visit(`<script>fetch(${JSON.stringify(url)}, { mode: 'no-cors' })</script>`, 1)).toEqual([403]);
  });

  it('may use presigned URLs once the bucket allows its origin (PutBucketCors), and reads the answers', async () => {
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: BUCKET,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: [siteOrigin],
              AllowedMethods: ['GET', 'PUT'],
              AllowedHeaders: ['*'],
              ExposeHeaders: ['ETag'],
            },
          ],
        },
      }),
    );
    const put = await presigned('PUT', 'cross-site/allowed.txt');
    const script = `<script>
      fetch(${JSON.stringify(put)}, { method: 'PUT', body: 'from the page' })
        .then((answer) => { document.title = 'put ' + answer.status + ' ' + answer.headers.get('etag'); })
        .catch((error) => { document.title = 'failed ' + error; });
    </script>`;
    const { statuses, page } = await open(script, 1);
    expect(statuses).toEqual([200]);
    // The page reads the answer: its status and the ETag the rule exposes.
    await expect.poll(() => page.title()).toMatch(/^put 200 "[0-9a-f]{32}"$/);
    expect(await content('cross-site/allowed.txt')).toBe('from the page');
    // Methods the rule leaves out are still refused.
    const url = await presigned('POST', '', { delete: '' });
    expect(
      await visit(
        `<script>fetch(${JSON.stringify(url)}, { method: 'POST', mode: 'no-cors', body: ` +
          `'<Delete><Object><Key>cross-site/allowed.txt</Key></Object></Delete>' })</script>`,
        1,
      ),
    ).toEqual([403]);
    expect(await content('cross-site/allowed.txt')).toBe('from the page');
  });
});
