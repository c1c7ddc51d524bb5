import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

import type { ChecksumAlgorithm } from './checksum-algorithms.ts';
import type { S3Operation } from './s3-operations.ts';

/**
 * Public types of the embedded S3-compatible object storage ("objstore").
 *
 * The objstore is an HTTP gateway that authenticates and authorises every request against the
 * configured access keys, then answers it from its storage (files or memory: storage/storage.ts).
 */

export const OBJSTORE_PERMISSIONS = ['create', 'delete', 'get', 'multipart', 'buckets'] as const;

export type ObjstorePermission = (typeof OBJSTORE_PERMISSIONS)[number];

/**
 * Where objects and upload parts are kept: files under the storage's directory, or memory (gone when the storage
 * closes).
 */
export const OBJSTORE_STORAGE_KINDS = ['files', 'memory'] as const;

export type ObjstoreStorageKind = (typeof OBJSTORE_STORAGE_KINDS)[number];

export interface ObjstoreKey {
  accessKeyId: string;
  secretAccessKey: string;
  permissions: readonly ObjstorePermission[];
  /**
   * The workspace whose account the key acts for: buckets it creates belong to that workspace.
   * Absent for the instance's shared account (the fixture keys).
   */
  workspaceId?: string | null;
}

/** Consulted on every request, so keys can be added and revoked while the server runs. */
export interface ObjstoreKeyLookup {
  find(accessKeyId: string): ObjstoreKey | undefined;
}

/** A bucket created over the S3 API (configured buckets are not in here). */
export interface CreatedBucket {
  name: string;
  /** The creating key's workspace; null for the shared account. */
  workspaceId: string | null;
  /** The LocationConstraint it was created with; null for none (us-east-1). */
  region: string | null;
  /** ISO 8601. */
  createdAt: string;
}

/** Where created buckets are recorded (the instance database); consulted on every request. */
export interface ObjstoreBucketRegistry {
  find(name: string): CreatedBucket | undefined;
  /** Records a new bucket, stamping its creation time; false when the name is taken. */
  add(bucket: Omit<CreatedBucket, 'createdAt'>): boolean;
  remove(name: string): void;
  list(): CreatedBucket[];
  /** Forgets every created bucket (the objstore's reset). */
  clear(): void;
}

export interface ObjstoreOptions {
  host: string;
  /**
   * Host names it answers under besides the loopback ones and `host`; a request under any other is 403 AccessDenied.
   */
  allowedHosts?: readonly string[];
  /** 0 picks any free port; the chosen one is in `Objstore.url`. */
  port: number;
  /** Root directory of the files storage (created if missing; untouched with 'memory'). */
  directory: string;
  /** Default 'files'. With 'memory' nothing is written under `directory`. */
  storage?: ObjstoreStorageKind;
  /** The memory storage's budget in bytes for objects and parts together, read at each upload. */
  memoryBudgetBytes?: () => number;
  keys: ObjstoreKeyLookup;
  /** Buckets that always exist, shared by every account; clients cannot delete them. */
  buckets: readonly string[];
  /** Where buckets clients create are recorded; default in memory. */
  createdBuckets?: ObjstoreBucketRegistry;
  /** Where every object is also a plain file `<bucket>/<key>` (see file-view.ts); no such view when omitted. */
  filesDirectory?: string;
  /** Diagnostic lines (never secrets); default none. */
  log?: (line: string) => void;
  /**
   * Buckets (each also in `buckets`) anyone may read without signing: GetObject, HeadObject,
   * ListObjects(V2) and HeadBucket. Unsigned writes are refused everywhere.
   */
  publicBuckets?: readonly string[];
  /**
   * Buckets (each also in `buckets`, none public) of one folder per workspace, each with its
   * keeper's access key id: a workspace's keys reach only the keys under `<workspace_id>/` there
   * (listings show no others), keys without a workspace none of it, the keeper all of it.
   */
  workspaceFolders?: Readonly<Record<string, string>>;
  /**
   * The storage's clock in epoch milliseconds, for the SigV4 request-time checks (15 minutes of
   * skew, presigned expiry); default `Date.now`. Wall time, not the emulator's test clock: SDK
   * clients sign with wall time even while a test has frozen or moved the emulator clock.
   */
  now?: () => number;
  /** Sees every request as it arrives and as it ends (localplane's request journal and fault rules); default none. */
  observer?: ObjstoreObserver;
  /**
   * The smallest size CompleteMultipartUpload takes for every part but the last; default S3's
   * 5 MiB. Smaller only for tests of uploads with thousands of parts, which S3 would make gigabytes.
   */
  minPartSize?: number;
  /**
   * How long a closing connection goes on reading what its client still sends (see lingering-close.ts); default 2 s.
   */
  lingerMs?: number;
}

/** What the gateway made of a request, for an observer. */
export interface ObjstoreRequestRecord {
  method: string;
  /** `Unknown` when the request could not be parsed. */
  operation: S3Operation;
  bucket: string | null;
  key: string | null;
  /** The access key id the request claimed (also when unknown); null for anonymous requests. */
  accessKeyId: string | null;
  /**
   * Final HTTP status. When the client went away before a response was sent this is 499
   * and `errorCode` is `RequestAborted`.
   */
  status: number;
  /** S3 error code of an error response, else null. */
  errorCode: string | null;
}

/** What an observer may have the gateway do with a request instead of serving it. */
export type ObjstoreFault =
  | { kind: 'error'; status: number; code: string; message: string; headers: Record<string, string> }
  /** The connection is reset (TCP RST): no reply at all. */
  | { kind: 'reset' }
  /** The connection is closed without a byte of reply. */
  | { kind: 'close' };

/** Bodies are kept up to this many bytes for an observer. */
export const OBSERVED_BODY_BYTES = 8 * 1024;

/** A request or response body as an observer sees it. */
export interface ObservedBody {
  /** Its first OBSERVED_BODY_BYTES bytes; null when not copied (upload bodies, which go to the storage). */
  head: Buffer | null;
  /** Its whole size in bytes, when known. */
  size: number | null;
  contentType: string | null;
}

export interface ObjstoreObservation {
  req: IncomingMessage;
  record: ObjstoreRequestRecord;
  requestBody: ObservedBody;
  responseBody: ObservedBody;
  /** The response's headers as name and value pairs, as set whether or not they were sent. */
  responseHeaders: [string, string][];
}

export interface ObjstoreObserver {
  /** As a request arrives, before the gateway looks at it: a fault answers it instead; a promise delays it. */
  arrive(req: IncomingMessage): ObjstoreFault | null | Promise<ObjstoreFault | null>;
  /** Once per request, when its response is ended or its client went away. */
  complete(observation: ObjstoreObservation): void;
}

export interface Objstore {
  /** http://host:port */
  url: string;
  /** The plain-file view, `<filesDir>/<bucket>/<key>`; null without one. */
  filesDir: string | null;
  /** Drops every object and bucket (created buckets too), recreates the configured buckets empty. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** One file or folder of the storage's own directory, for snapshots: `data` is null for a folder. */
export interface ObjstoreTreeEntry {
  /** Relative to the storage's directory, '/'-separated. */
  path: string;
  data: Uint8Array | null;
}

/** The instance's objstore: created without a port, bound on first use. */
export interface EmbeddedObjstore extends Omit<Objstore, 'url'> {
  /** http://host:port once listening; null before. */
  readonly url: string | null;
  /** Binds host:port (once) and gives the URL. */
  listen(): Promise<string>;
  /** The buckets (configured, then created), each with its objects' keys and sizes, in key order. */
  buckets(): { name: string; objects: { key: string; size: number }[] }[];
  /** Reads every bucket and object as they are stored, whoever owns them (the admin API's object browser). */
  browser: ObjectBrowser;
  /**
   * What HeadObject shows of an object (`content-type`, `content-length`, `etag`, ...); null when there is no such
   * bucket or object.
   */
  headObject(bucket: string, key: string): Promise<Readonly<Record<string, string | number | undefined>> | null>;
  /** Removes the created buckets the registry no longer holds (after a one-workspace reset dropped them). */
  pruneBuckets(): Promise<void>;
  /** Every bucket, object, metadata sidecar and upload in progress, as stored. */
  contents(): ObjstoreTreeEntry[];
  /**
   * What keeps `contents()` taken before from being this storage's, with `createdBuckets` besides
   * the configured ones, in words; undefined when they are usable.
   */
  contentsProblem(entries: readonly ObjstoreTreeEntry[], createdBuckets: readonly string[]): string | undefined;
  /**
   * Writes `contents()` taken before (that contentsProblem found usable) beside the storage, to replace it: nothing
   * changes until `install`.
   */
  stageContents(entries: readonly ObjstoreTreeEntry[], createdBuckets: readonly string[]): StagedContents;
}

/** A storage's whole contents written beside it. */
export interface StagedContents {
  /** Replaces the whole storage with them in one step; the file view is rebuilt. */
  install(): Promise<void>;
  /** Removes them (nothing once installed). */
  discard(): void;
}

/** A bucket as the object browser shows it. */
export interface BucketSummary {
  name: string;
  /** The emulator clock's time of its CreateBucket; for a configured bucket, when its folder was made. */
  createdAt: Date | null;
  /** The workspace whose key created it; null for the shared account's (the configured buckets among them). */
  workspaceId: string | null;
  region: string;
  /** One of the buckets every instance has (not created over the S3 API). */
  configured: boolean;
  /** Readable unsigned. */
  public: boolean;
  /** One folder per workspace, each reached by that workspace's keys alone. */
  workspaceFolders: boolean;
  objectCount: number;
  bytes: number;
}

/** What a listing shows of an object. */
export interface ListedObject {
  key: string;
  size: number;
  /** Quoted, as S3 writes it. */
  etag: string;
  lastModified: Date;
}

/** Which page of a bucket's keys to read. */
export interface ObjectPageRequest {
  prefix: string;
  /** '' for none: keys are not rolled up into common prefixes. */
  delimiter: string;
  /** A piece of the key to look for (any case) among every key under the prefix, listed flat; null for S3's listing. */
  search: string | null;
  /** The name the previous page ended on (a key or a common prefix); '' for the first page. */
  after: string;
  limit: number;
}

export interface ObjectPage {
  /** In S3's key order. */
  objects: ListedObject[];
  /** The common prefixes (folders) of a delimited listing, in S3's order. */
  prefixes: string[];
  /** The name this page ended on when more follow; null on the last page. */
  last: string | null;
}

/** What S3 keeps of an object besides its content. */
export interface ObjectDetails extends ListedObject {
  contentType: string;
  storageClass: string;
  /** The other headers stored with it (Cache-Control, Content-Encoding, ...), by lower-case name. */
  headers: Record<string, string>;
  /** `x-amz-meta-*` values by name (without the prefix), as text. */
  userMetadata: Record<string, string>;
  /** Base64, as in `x-amz-checksum-*`. */
  checksums: Partial<Record<ChecksumAlgorithm, string>>;
  /** FULL_OBJECT or COMPOSITE; null without a checksum. */
  checksumType: string | null;
  /** How many parts a multipart upload made it of; null for an object put in one piece. */
  partsCount: number | null;
}

/** An object being read: its details, and its content as it was when opened. */
export interface OpenedObject {
  details: ObjectDetails;
  /** The size of the content opened (an object replaced meanwhile keeps the content that was opened). */
  size: number;
  content: Readable;
}

/** Every bucket and object as stored, read without a key pair: what the harness (not an S3 client) sees. */
export interface ObjectBrowser {
  bucketExists(bucket: string): boolean;
  /** Every bucket, in name order. */
  buckets(): Promise<BucketSummary[]>;
  /** A page of a bucket (that exists) as the request asks. */
  page(bucket: string, request: ObjectPageRequest): Promise<ObjectPage>;
  /** null when there is no such object. */
  describe(bucket: string, key: string): Promise<ObjectDetails | null>;
  /** null when there is no such object. */
  open(bucket: string, key: string): Promise<OpenedObject | null>;
  /**
   * Stores an object in a bucket that exists as PutObject does (`length` null: the size shows at the end of the
   * content); throws the S3 error PutObject would answer (a GatewayError).
   */
  put(
    bucket: string,
    key: string,
    content: Readable,
    upload: { length: number | null; contentType: string },
  ): Promise<ObjectDetails>;
  /** Deletes an object as DeleteObject does; false when there is no such object. */
  delete(bucket: string, key: string): Promise<boolean>;
}
