/**
 * The objstore as the harness sees it (the admin API's object browser, /_localplane/objstore/buckets):
 * every bucket with its owner and size, a bucket's keys a page at a time as S3's listing pages
 * them or found by a piece of their name, an object's metadata and its content. It reads the
 * storage directly, with no key pair: every bucket and every workspace's folder is in sight.
 */
import type { BucketDirectory } from './bucket-directory.ts';
import type { FileView } from './file-view/file-view.ts';
import { CHECKSUM_ALGORITHMS, checksumHeaderName } from './checksum-algorithms.ts';
import { layoutOf } from './server/operations/multipart-layout.ts';
import { commonPrefixesOf, compareKeys, itemsOf, pageOf } from './server/operations/paging.ts';
import { userMetadataText } from './server/operations/user-metadata.ts';
import type { ObjectHead, ObjstoreStorage } from './storage/storage.ts';
import type { BucketSummary, ListedObject, ObjectBrowser, ObjectDetails } from './types.ts';

/** The headers stored with an object besides its content type, storage class and user metadata. */
const STORED_HEADERS = [
  'cache-control',
  'content-disposition',
  'content-encoding',
  'content-language',
  'expires',
  'x-amz-website-redirect-location',
];

const USER_METADATA_PREFIX = 'x-amz-meta-';

function listedObject(key: string, head: ObjectHead): ListedObject {
  return {
    key,
    size: Number(head['content-length']),
    etag: String(head['etag']),
    lastModified: new Date(String(head['last-modified'])),
  };
}

function detailsOf(key: string, head: ObjectHead): ObjectDetails {
  const stored = (name: string) => (typeof head[name] === 'string' ? (head[name] as string) : undefined);
  const checksums: ObjectDetails['checksums'] = {};
  for (const algorithm of CHECKSUM_ALGORITHMS) {
    const value = stored(checksumHeaderName(algorithm));
    if (value !== undefined) checksums[algorithm] = value;
  }
  const userMetadata: Record<string, string> = {};
  for (const name of Object.keys(head)) {
    const value = stored(name);
    if (name.startsWith(USER_METADATA_PREFIX) && value !== undefined)
      userMetadata[name.slice(USER_METADATA_PREFIX.length)] = userMetadataText(value);
  }
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = stored(name);
    if (value !== undefined) headers[name] = value;
  }
  return {
    ...listedObject(key, head),
    contentType: stored('content-type') ?? 'binary/octet-stream',
    storageClass: stored('x-amz-storage-class') ?? 'STANDARD',
    headers,
    userMetadata,
    checksums,
    checksumType: Object.keys(checksums).length === 0 ? null : (stored('x-amz-checksum-type') ?? 'FULL_OBJECT'),
    partsCount: layoutOf(head)?.parts.length ?? null,
  };
}

export interface ObjectBrowserOptions {
  storage: ObjstoreStorage;
  directory: BucketDirectory;
  publicBuckets: ReadonlySet<string>;
  /** The buckets of workspace folders. */
  workspaceFolders: ReadonlySet<string>;
  /** Kept in step with every write. */
  fileView?: FileView;
}

export function createObjectBrowser({
  storage,
  directory,
  publicBuckets,
  workspaceFolders,
  fileView,
}: ObjectBrowserOptions): ObjectBrowser {
  const describe = async (bucket: string, key: string) => {
    const head = await storage.headObject(bucket, key);
    return head && detailsOf(key, head);
  };

  return {
    bucketExists: (bucket) => directory.ownerOf(bucket) !== undefined,

    async buckets() {
      const summaries = directory.names().map(async (name): Promise<BucketSummary> => {
        const created = directory.registry.find(name);
        const objects = storage.listBucketObjects(name);
        return {
          name,
          createdAt: created ? new Date(created.createdAt) : await storage.bucketCreationDate(name),
          workspaceId: created?.workspaceId ?? null,
          region: directory.regionOf(name)!,
          configured: directory.isConfigured(name),
          public: publicBuckets.has(name),
          workspaceFolders: workspaceFolders.has(name),
          objectCount: objects.length,
          bytes: objects.reduce((sum, object) => sum + object.size, 0),
        };
      });
      return (await Promise.all(summaries)).sort((a, b) => compareKeys(a.name, b.name));
    },

    async page(bucket, { prefix, delimiter, search, after, limit }) {
      let keys = await storage.objectKeys(bucket, prefix);
      if (search !== null) {
        const wanted = search.toLowerCase();
        keys = keys.filter((key) => key.toLowerCase().includes(wanted));
      }
      const page = pageOf(keys.sort(compareKeys), (key) => key, {
        prefix,
        delimiter: search === null ? delimiter : '',
        marker: after,
        limit,
      });
      // An object deleted since its key was read drops out.
      const objects = await Promise.all(
        itemsOf(page).map(async (key) => {
          const head = await storage.headObject(bucket, key);
          return head && listedObject(key, head);
        }),
      );
      return {
        objects: objects.filter((object) => object !== null),
        prefixes: commonPrefixesOf(page),
        last: page.isTruncated ? page.entries.at(-1)!.name : null,
      };
    },

    describe,

    async put(bucket, key, content, { length, contentType }) {
      // The S3 operations load with the gateway's first request (objstore.ts); an upload loads them too.
      const { putObjectContent } = await import('./server/operations/uploads.ts');
      try {
        await putObjectContent(storage, bucket, key, content, length, { 'content-type': contentType });
      } finally {
        await fileView?.syncKey(bucket, key);
      }
      return (await describe(bucket, key))!;
    },

    async delete(bucket, key) {
      if (!(await storage.objectExists(bucket, key))) return false;
      await storage.deleteObject(bucket, key);
      await fileView?.syncKey(bucket, key);
      return true;
    },

    async open(bucket, key) {
      const opened = await storage.openObject(bucket, key);
      if (opened === null) return null;
      const details = await describe(bucket, key);
      // No metadata: the object was deleted since it was opened.
      if (details === null) opened.content.destroy();
      return details && { details, ...opened };
    },
  };
}
