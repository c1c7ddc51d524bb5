import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';

import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { customIssue, HttpError, notFound } from '../shared/errors.ts';
import { neverFramedHeaders } from '../shared/never-framed.ts';
import { queryInteger } from '../shared/validation.ts';
import { CHECKSUM_ALGORITHMS } from './checksum-algorithms.ts';
import { errors as s3Errors, GatewayError } from './s3-errors.ts';
import type { BucketSummary, ListedObject, ObjectBrowser, ObjectDetails } from './types.ts';

/** S3's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
/** The most entries (objects and common prefixes) a page holds, as S3's listings. */
const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;

const timestamp = z.iso.datetime({ offset: true });

const bucketSchema = z.object({
  name: z.string(),
  created_at: timestamp.nullable(),
  workspace_id: z.string().nullable(),
  region: z.string(),
  configured: z.boolean(),
  public: z.boolean(),
  workspace_folders: z.boolean(),
  object_count: z.int(),
  bytes: z.int(),
});

const listedObjectSchema = z.object({ key: z.string(), size: z.int(), etag: z.string(), last_modified: timestamp });

const pageSchema = z.object({
  bucket: z.string(),
  prefix: z.string(),
  delimiter: z.string(),
  search: z.string().nullable(),
  objects: z.array(listedObjectSchema),
  prefixes: z.array(z.string()),
  next_cursor: z.string().nullable(),
});

const objectSchema = listedObjectSchema.extend({
  bucket: z.string(),
  content_type: z.string(),
  storage_class: z.string(),
  headers: z.record(z.string(), z.string()),
  user_metadata: z.record(z.string(), z.string()),
  checksums: z.partialRecord(z.enum(CHECKSUM_ALGORITHMS), z.string()),
  checksum_type: z.string().nullable(),
  parts_count: z.int().nullable(),
});

const bucketParams = z.object({ bucket: z.string() });

/**
 * A page's cursor is the name the page ended on, base64url: opaque to clients, and resumed after as S3 resumes a
 * listing.
 */
const cursorOf = (name: string) => Buffer.from(name, 'utf8').toString('base64url');

const cursor = z.string().transform((text, ctx) => {
  const name = Buffer.from(text, 'base64url').toString('utf8');
  if (name === '' || cursorOf(name) !== text) {
    ctx.addIssue(customIssue('value_error', 'a cursor is the next_cursor of a page'));
    return z.NEVER;
  }
  return name;
});

const pageQuery = z.object({
  prefix: z.string().default(''),
  delimiter: z.string().default(''),
  search: z.string().optional(),
  cursor: cursor.optional(),
  limit: queryInteger({ min: 1, max: MAX_PAGE }).optional(),
});

const objectKey = z
  .string()
  .min(1)
  .refine((key) => Buffer.byteLength(key) <= MAX_KEY_BYTES, {
    message: `an object key is at most ${MAX_KEY_BYTES} bytes of UTF-8`,
  });
const objectQuery = z.object({ key: objectKey });

export type BucketView = z.output<typeof bucketSchema>;
export type ObjectsQuery = z.input<typeof pageQuery>;
export type ObjectsPage = z.output<typeof pageSchema>;
export type ObjectView = z.output<typeof objectSchema>;

const bucketNotFound = notFoundError('Bucket', 'Bucket reports not found');
const objectNotFound = notFoundError(
  'Bucket or object',
  'Object day=2026-11-02/runs.parquet not found in bucket exports',
);

const bucketView = (bucket: BucketSummary) => ({
  name: bucket.name,
  created_at: bucket.createdAt?.toISOString() ?? null,
  workspace_id: bucket.workspaceId,
  region: bucket.region,
  configured: bucket.configured,
  public: bucket.public,
  workspace_folders: bucket.workspaceFolders,
  object_count: bucket.objectCount,
  bytes: bucket.bytes,
});

const objectView = (object: ListedObject) => ({
  key: object.key,
  size: object.size,
  etag: object.etag,
  last_modified: object.lastModified.toISOString(),
});

const detailsView = (bucket: string, details: ObjectDetails) => ({
  bucket,
  ...objectView(details),
  content_type: details.contentType,
  storage_class: details.storageClass,
  headers: details.headers,
  user_metadata: details.userMetadata,
  checksums: details.checksums,
  checksum_type: details.checksumType,
  parts_count: details.partsCount,
});

/** What an upload is refused for, in the API's shape: the S3 error's status and message (413 for a too large one). */
function uploadRefused(error: unknown): unknown {
  if (!(error instanceof GatewayError)) return error;
  const { status, code, message } = error.spec;
  return new HttpError(code === s3Errors.entityTooLarge().code ? 413 : (status as ContentfulStatusCode), message);
}

/** The declared size of a request's body; null when it is sent in chunks. */
function declaredLength(header: string | undefined): number | null {
  return header !== undefined && /^\d{1,16}$/.test(header) ? Number(header) : null;
}

/**
 * A name for the downloaded file: the key's last segment, with an ASCII stand-in for clients that do not read
 * `filename*`.
 */
function contentDisposition(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1) || 'download';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** A stored content type a header can carry as is (one restored from a snapshot could hold anything). */
const servableContentType = (type: string) =>
  /^[\x21-\x7e][\x20-\x7e]*$/.test(type) ? type : 'application/octet-stream';

/**
 * /_localplane/objstore/buckets: every bucket and object as stored, to look at and download (the dashboard's object
 * browser).
 */
export function objstoreBrowserRoutes(browser: ObjectBrowser) {
  const app = new OpenApiHono('admin');
  const requireBucket = (bucket: string) => {
    if (!browser.bucketExists(bucket)) throw notFound(`Bucket ${bucket} not found`);
  };
  const objectMissing = (bucket: string, key: string) => notFound(`Object ${key} not found in bucket ${bucket}`);

  app.openapi(
    {
      method: 'get',
      path: '/objstore/buckets',
      summary: 'Every bucket of the objstore, configured and created: owner, region, object count and bytes',
      response: {
        status: 200,
        description: 'The buckets, in name order',
        schema: z.object({ buckets: z.array(bucketSchema) }),
      },
    },
    async (c) => c.json({ buckets: (await browser.buckets()).map(bucketView) }),
  );

  app.openapi(
    {
      method: 'get',
      path: '/objstore/buckets/:bucket/objects',
      summary: "A page of a bucket's keys under a prefix, as S3 lists them, or those holding a piece of text",
      description:
        'Keys in S3 order; with a delimiter, the keys holding it after the prefix are rolled up into `prefixes` ' +
        '(folders), as ListObjectsV2 does. ' +
        ('`search` finds the keys under the prefix holding that text (in any case), across the whole bucket, ' +
          'listed flat. ') +
        ('A page holds `limit` entries (objects and prefixes, 100 by default, at most 1000); `next_cursor` resumes ' +
          'after it.'),
      params: bucketParams,
      query: pageQuery,
      response: { status: 200, description: 'The page', schema: pageSchema },
      errors: [bucketNotFound],
    },
    async (c, { params: { bucket }, query }) => {
      requireBucket(bucket);
      const search = query.search || null;
      const page = await browser.page(bucket, {
        prefix: query.prefix,
        delimiter: query.delimiter,
        search,
        after: query.cursor ?? '',
        limit: query.limit ?? DEFAULT_PAGE,
      });
      return c.json({
        bucket,
        prefix: query.prefix,
        delimiter: query.delimiter,
        search,
        objects: page.objects.map(objectView),
        prefixes: page.prefixes,
        next_cursor: page.last === null ? null : cursorOf(page.last),
      });
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/objstore/buckets/:bucket/object',
      summary: "An object's metadata: size, ETag, checksums, content type, user metadata, parts",
      params: bucketParams,
      query: objectQuery,
      response: { status: 200, description: 'The object', schema: objectSchema },
      errors: [objectNotFound],
    },
    async (c, { params: { bucket }, query: { key } }) => {
      requireBucket(bucket);
      const details = await browser.describe(bucket, key);
      if (details === null) throw objectMissing(bucket, key);
      return c.json(detailsView(bucket, details));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/objstore/buckets/:bucket/object/content',
      summary: "An object's content, as a download",
      description:
        'With the content type it was stored with, its ETag and Last-Modified, and Content-Disposition: ' +
        'attachment named after the key.',
      params: bucketParams,
      query: objectQuery,
      response: { status: 200, description: 'The content', contentType: 'application/octet-stream' },
      errors: [objectNotFound],
    },
    async (c, { params: { bucket }, query: { key } }) => {
      requireBucket(bucket);
      const opened = await browser.open(bucket, key);
      if (opened === null) throw objectMissing(bucket, key);
      return c.body(Readable.toWeb(opened.content) as ReadableStream, 200, {
        'content-type': servableContentType(opened.details.contentType),
        'content-length': String(opened.size),
        'content-disposition': contentDisposition(key),
        etag: opened.details.etag,
        'last-modified': opened.details.lastModified.toUTCString(),
        // Served on the dashboard's origin: never sniffed into a page, never run as one, never framed.
        'x-content-type-options': 'nosniff',
        ...neverFramedHeaders('sandbox'),
      });
    },
  );

  app.openapi(
    {
      method: 'put',
      path: '/objstore/buckets/:bucket/object',
      summary: 'Store an object under a key, as S3 PutObject does: its bytes are the body',
      description:
        "The content type is the request's Content-Type (application/octet-stream without one). The object is " +
        'stored as a PutObject of the same bytes would be: same ETag and checksum (CRC64NVME), same storage and ' +
        "limits (5 GiB; the memory storage's budget), one under the key replaced.",
      params: bucketParams,
      query: objectQuery,
      rawBody: { contentType: 'application/octet-stream', description: "The object's content, at most 5 GiB" },
      response: [
        { status: 201, description: 'The object stored', schema: objectSchema },
        { status: 200, description: 'The object that was under the key replaced', schema: objectSchema },
      ],
      errors: [
        bucketNotFound,
        httpError(413, 'The content is over 5 GiB', { too_large: s3Errors.entityTooLarge().message }),
        httpError(507, "The memory storage's budget is spent", {
          insufficient_storage: s3Errors.insufficientStorage(2 ** 30).message,
        }),
      ],
    },
    async (c, { params: { bucket }, query: { key } }) => {
      requireBucket(bucket);
      const replaced = (await browser.describe(bucket, key)) !== null;
      const body = c.req.raw.body;
      const content = body === null ? Readable.from([]) : Readable.fromWeb(body as WebReadableStream);
      try {
        const details = await browser.put(bucket, key, content, {
          length: declaredLength(c.req.header('content-length')),
          contentType: c.req.header('content-type') || 'application/octet-stream',
        });
        return c.json(detailsView(bucket, details), replaced ? 200 : 201);
      } catch (error) {
        throw uploadRefused(error);
      }
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/objstore/buckets/:bucket/object',
      summary: 'Delete an object, as S3 DeleteObject does',
      params: bucketParams,
      query: objectQuery,
      response: { status: 204, description: 'Deleted' },
      errors: [objectNotFound],
    },
    async (c, { params: { bucket }, query: { key } }) => {
      requireBucket(bucket);
      if (!(await browser.delete(bucket, key))) throw objectMissing(bucket, key);
      return c.body(null, 204);
    },
  );

  return app;
}
