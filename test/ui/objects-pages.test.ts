/**
 * The object browser at /ui/objects as app.request() sees it: objects put over the S3 API into an
 * in-process instance, then its pages: the buckets, a prefix's folders (hive partitions read as
 * `name = value`) and objects with breadcrumbs, search across a bucket, pages by cursor, an
 * object's metadata with its download link and its preview (GET /_localplane/objstore/preview),
 * htmx fragments, and the API's errors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { formatBytes, segmentLabel } from '../../src/ui/views/objects.tsx';
import { fixturesOf } from '../support/in-process.ts';
import { fullKey } from '../support/instance.ts';
import { duckdb, s3For } from '../support/objstore.ts';
import type { ObjectView } from '../../src/objstore/browser-routes.ts';
import { timestampText } from './support/time.ts';

let lp: InProcessLocalplane;
let s3: S3Client;
const BUCKET = 'warehouse-landing';
const EXPORT_ID = '5d0c2b9e-8f7a-4c1d-a3b2-9e8f7a6b5c4d';
const PARQUET_KEY = `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-02/runs-0.parquet`;

const page = async (path: string, headers: Record<string, string> = {}) => {
  const response = await lp.request(path, { headers });
  return { status: response.status, text: await response.text() };
};

/** The text of an HTML fragment without its tags (entities left as they are); a key's break points are no space. */
const textOf = (html: string) =>
  html
    .replaceAll('<wbr/>', '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ');

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  s3 = s3For(await lp.objstoreEndpoint(), fullKey(await fixturesOf(lp)));
  for (const key of [
    PARQUET_KEY,
    `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-01/runs-0.parquet`,
    'lake/README.md',
  ]) {
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: key,
        Body: `bytes of ${key}`,
        ContentType: 'application/octet-stream',
        Metadata: { exporter: 'test' },
      }),
    );
  }
});

afterAll(async () => {
  await lp?.stop();
});

describe('/ui/objects', () => {
  it('lists every bucket the API lists, each linking to its own URL, with its objects and size', async () => {
    const { buckets } = (await (await lp.request('/_localplane/objstore/buckets')).json()) as {
      buckets: { name: string; object_count: number; bytes: number }[];
    };
    const { status, text } = await page('/ui/objects');
    expect(status).toBe(200);
    expect(text).toContain('<a href="/ui/objects" aria-current="page">Objects</a>');
    for (const bucket of buckets) {
      expect(text).toContain(`<th scope="row"><a href="/ui/objects/${bucket.name}">${bucket.name}</a></th>`);
    }
    const landing = buckets.find((bucket) => bucket.name === BUCKET)!;
    expect(landing.object_count).toBe(3);
    expect(text).toContain(
      `<td class="num">3</td><td class="num nowrap" title="${landing.bytes} bytes">${formatBytes(landing.bytes)}</td>`,
    );
  });

  it(
    'a prefix: breadcrumbs and folders read as hive partitions (export_id = …, day = …), each a link to its own ' +
      'URL',
    async () => {
      const prefix = `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/`;
      const { status, text } = await page(`/ui/objects/${BUCKET}?prefix=${encodeURIComponent(prefix)}`);
      expect(status).toBe(200);
      const crumbs = text.slice(
        text.indexOf('<nav aria-label="Breadcrumb"'),
        text.indexOf('</nav>', text.indexOf('<nav aria-label="Breadcrumb"')),
      );
      expect(textOf(crumbs).trim()).toBe(
        `Buckets ${BUCKET} lake export_id = ${EXPORT_ID} tenant_id = t1 session_id = s1`,
      );
      expect(crumbs).toContain(
        `<a href="/ui/objects/${BUCKET}?prefix=${encodeURIComponent(`lake/export_id=${EXPORT_ID}/`)}">export_id ` +
          `= ${EXPORT_ID}</a>`,
      );
      expect(crumbs).toContain('<span aria-current="page">session_id = s1</span>');
      for (const day of ['2026-11-01', '2026-11-02']) {
        expect(text).toContain(
          `<a href="/ui/objects/${BUCKET}?prefix=${encodeURIComponent(`${prefix}day=${day}/`)}">day = ${day}/</a>`,
        );
      }
      const day = await page(`/ui/objects/${BUCKET}?prefix=${encodeURIComponent(`${prefix}day=2026-11-02/`)}`);
      expect(day.text).toContain(
        `<a href="/ui/objects/${BUCKET}/object?key=${encodeURIComponent(PARQUET_KEY)}">runs-0.parquet</a>`,
      );
    },
  );

  it('search finds keys across the whole bucket, past the first page of a folder, by their whole key', async () => {
    const bucket = 'ui-search';
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const keys = Array.from({ length: 120 }, (_, index) => `logs/${String(index).padStart(3, '0')}.txt`);
    keys[118] = 'logs/zz/the-Needle.txt';
    await Promise.all(keys.map((key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }))));

    const folder = await page(`/ui/objects/${bucket}?prefix=logs%2F`);
    expect(folder.text).not.toContain('the-Needle');
    const found = await page(`/ui/objects/${bucket}?search=needle`);
    expect(found.status).toBe(200);
    expect(found.text).toContain('<input type="search" name="search" value="needle"');
    expect(found.text).toContain(
      `<a href="/ui/objects/${bucket}/object?key=logs%2Fzz%2Fthe-Needle.txt">logs/<wbr/>zz/<wbr/>the-Needle.txt</a>`,
    );
    expect(textOf(found.text)).toContain('Keys holding “needle”');
    const none = await page(`/ui/objects/${bucket}?search=haystack`);
    expect(textOf(none.text)).toContain('No key holds “haystack”.');
  });

  it('pages a long folder by cursor, each page its own URL', async () => {
    const first = await page('/ui/objects/ui-search?prefix=logs%2F');
    const next = /<a href="(\/ui\/objects\/ui-search\?prefix=logs%2F&amp;cursor=[^"]+)">Next page<\/a>/.exec(
      first.text,
    )?.[1];
    expect(next).toBeDefined();
    expect(first.text).not.toContain('First page');
    const second = await page(next!.replaceAll('&amp;', '&'));
    expect(second.status).toBe(200);
    expect(second.text).toContain('>119.txt</a>');
    expect(second.text).toContain('>zz/</a>');
    expect(second.text).not.toContain('>000.txt</a>');
    expect(second.text).toContain('<a href="/ui/objects/ui-search?prefix=logs%2F">First page</a>');
    expect(second.text).not.toContain('Next page');
  });

  it("an object: its metadata as the API gives it, and a download link to the admin API's content", async () => {
    const details = (await (
      await lp.request(`/_localplane/objstore/buckets/${BUCKET}/object?key=${encodeURIComponent(PARQUET_KEY)}`)
    ).json()) as ObjectView;
    const { status, text } = await page(`/ui/objects/${BUCKET}/object?key=${encodeURIComponent(PARQUET_KEY)}`);
    expect(status).toBe(200);
    const crumbs = text.slice(
      text.indexOf('<nav aria-label="Breadcrumb"'),
      text.indexOf('</nav>', text.indexOf('<nav aria-label="Breadcrumb"')),
    );
    expect(textOf(crumbs)).toContain(`day = 2026-11-02 runs-0.parquet`);
    const metadata = textOf(
      text.slice(
        text.indexOf('<table aria-label="Metadata"'),
        text.indexOf('</table>', text.indexOf('<table aria-label="Metadata"')),
      ),
    );
    for (const value of [
      PARQUET_KEY,
      `${details.size} bytes`,
      details.etag.replaceAll('"', '&quot;'),
      timestampText(details.last_modified),
      details.content_type,
      `CRC64NVME ${details.checksums.CRC64NVME}`,
      'exporter test',
    ]) {
      expect(metadata).toContain(value);
    }
    const download = /<a href="([^"]+)" download="" hx-boost="false" class="button">Download<\/a>/
      .exec(text)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(download).toBe(
      `/_localplane/objstore/buckets/${BUCKET}/object/content?key=${encodeURIComponent(PARQUET_KEY)}`,
    );
    const file = await lp.request(download!);
    expect(await file.text()).toBe(`bytes of ${PARQUET_KEY}`);
    expect(file.headers.get('content-disposition')).toContain('filename="runs-0.parquet"');
  });

  it(
    'previews a Parquet file as its schema and first rows (nulls shown as null), JSON and text in a <pre>, ' +
      'binary content as a note',
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'localplane-ui-objects-'));
      try {
        const file = join(folder, 'small.parquet');
        await duckdb(
          `COPY (SELECT * FROM (VALUES (1, 'alpha', 2.5), (2, NULL, 0.25)) AS t(n, word, score)) TO '${file}' ` +
            `(FORMAT parquet)`,
        );
        await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'preview/small.parquet', Body: readFileSync(file) }));
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
      const parquet = await page(`/ui/objects/${BUCKET}/object?key=preview%2Fsmall.parquet`);
      expect(parquet.status).toBe(200);
      const schema = parquet.text.slice(parquet.text.indexOf('<table aria-labelledby="preview-schema">'));
      expect(textOf(schema.slice(0, schema.indexOf('</table>')))).toContain(
        'n INTEGER word VARCHAR score DECIMAL(3,2)',
      );
      const rows = parquet.text.slice(parquet.text.indexOf('<table aria-labelledby="preview-rows"'));
      expect(textOf(rows.slice(0, rows.indexOf('</table>'))).trim()).toBe('n word score 1 alpha 2.50 2 null 0.25');
      expect(parquet.text).toContain('<td class="mono muted">null</td>');
      expect(parquet.text).toContain('<td class="mono" title="alpha">alpha</td>');
      expect(textOf(parquet.text)).toContain('First rows (2 of 2)');

      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'preview/doc.json',
          Body: '{"a": "<b>"}',
          ContentType: 'application/json',
        }),
      );
      const json = await page(`/ui/objects/${BUCKET}/object?key=preview%2Fdoc.json`);
      expect(json.text).toContain(
        // Pretty-printed.
        '<pre aria-label="Content (json)" tabindex="0">{\n  &quot;a&quot;: &quot;&lt;b&gt;&quot;\n}</pre>',
      );
      expect(textOf(json.text)).toContain('JSON, shown below.');

      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'preview/long.txt',
          Body: 'line\n'.repeat(20_000),
          ContentType: 'text/plain',
        }),
      );
      const text = await page(`/ui/objects/${BUCKET}/object?key=preview%2Flong.txt`);
      expect(text.text).toContain('<pre aria-label="Content (text)" tabindex="0">line\nline');
      expect(textOf(text.text)).toContain('Text: its start is shown below; download it for the rest.');

      await s3.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'preview/blob.bin', Body: Buffer.from([0, 1, 2, 255]) }),
      );
      expect(textOf((await page(`/ui/objects/${BUCKET}/object?key=preview%2Fblob.bin`)).text)).toContain(
        'Binary content: download it to look inside.',
      );
    },
  );

  it("shows a preview the API refuses as its detail, in an alert, beside the object's metadata", async () => {
    // A key with a `..` segment is an object like any other, but no plain file: the preview reads plain files.
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'preview/../odd.txt', Body: 'odd' }));
    const odd = await page(`/ui/objects/${BUCKET}/object?key=${encodeURIComponent('preview/../odd.txt')}`);
    expect(odd.status).toBe(200);
    expect(odd.text).toContain('<td class="mono">preview/<wbr/>../<wbr/>odd.txt</td>');
    const preview = (await (
      await lp.request(`/_localplane/objstore/preview?bucket=${BUCKET}&key=${encodeURIComponent('preview/../odd.txt')}`)
    ).json()) as { detail: string };
    expect(odd.text).toContain(`<p class="error" role="alert">${preview.detail.replaceAll("'", '&#39;')}</p>`);
  });

  it('answers htmx with the browser part alone, and a whole page otherwise', async () => {
    const whole = await page(`/ui/objects/${BUCKET}?prefix=lake%2F`);
    expect(whole.text).toContain('<html');
    expect(whole.text).toContain('<div id="objects" hx-boost="true" hx-target="#objects"');
    const fragment = await page(`/ui/objects/${BUCKET}?prefix=lake%2F`, { 'hx-request': 'true' });
    expect(fragment.text).not.toContain('<html');
    expect(fragment.text).not.toContain('id="objects"');
    expect(fragment.text.startsWith('<nav aria-label="Breadcrumb"')).toBe(true);
    expect(fragment.text).toContain(`>export_id = ${EXPORT_ID}/</a>`);
  });

  it("shows the API's refusals as its detail, in an alert", async () => {
    const bucket = await page('/ui/objects/no-such-bucket');
    expect(bucket.status).toBe(404);
    expect(bucket.text).toContain('<p class="error" role="alert">Bucket no-such-bucket not found</p>');
    const object = await page(`/ui/objects/${BUCKET}/object?key=lake%2Fnone`);
    expect(object.status).toBe(404);
    expect(object.text).toContain(`role="alert">Object lake/none not found in bucket ${BUCKET}</p>`);
    const cursor = await page(`/ui/objects/${BUCKET}?cursor=%40%40`);
    expect(cursor.status).toBe(422);
    expect(cursor.text).toContain('role="alert">query.cursor: Value error, a cursor is the next_cursor of a page</p>');
  });
});

describe('labels', () => {
  it('reads a hive partition as name = value, and anything else as it is', () => {
    expect(segmentLabel('export_id=abc')).toBe('export_id = abc');
    expect(segmentLabel('day=2026-11-02')).toBe('day = 2026-11-02');
    expect(segmentLabel('a=b=c')).toBe('a = b=c');
    expect(segmentLabel('=x')).toBe('=x');
    expect(segmentLabel('plain')).toBe('plain');
  });

  it('gives sizes in binary units', () => {
    expect([0, 1023, 1024, 1536, 10 * 1024 * 1024, 5 * 1024 ** 4].map(formatBytes)).toEqual([
      '0 B',
      '1023 B',
      '1.0 KiB',
      '1.5 KiB',
      '10 MiB',
      '5.0 TiB',
    ]);
  });
});
