/**
 * Which buckets exist, who owns them, and what part of each a key reaches. An account is a
 * workspace; keys without a workspace (the fixture keys) act for the shared account. The
 * configured buckets belong to the shared account, and so does a bucket such a key creates:
 * every account may use the shared account's buckets, as every workspace uses the configured
 * ones. A bucket created by a workspace's key is that workspace's alone. A configured bucket of
 * workspace folders is split by account instead: each workspace's keys reach its folder
 * `<workspace_id>/` alone, keys of the shared account none of it, and only the bucket's keeper
 * (one access key) all of it. S3's rules on bucket names and location constraints live here too;
 * the HTTP side is buckets.ts.
 */
import { createHash } from 'node:crypto';

import type { CreatedBucket, ObjstoreBucketRegistry, ObjstoreKey } from './types.ts';

/** An account: a workspace id, or null for the shared account (configured buckets, keys without a workspace). */
export type Account = string | null;

export function accountOf(key: ObjstoreKey | null): Account {
  return key?.workspaceId ?? null;
}

/**
 * An account's canonical user id, in S3's shape (64 hex digits); the shared account's is the objstore's long-standing
 * owner id.
 */
export function canonicalIdOf(account: Account): string {
  const hash = createHash('sha256').update('localplane objstore owner');
  if (account !== null) hash.update(`\0${account}`);
  return hash.digest('hex');
}

const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];
const IP_ADDRESS = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * S3's rules for a new bucket's name (general purpose buckets): 3–63 characters of lowercase
 * letters, digits, dots and hyphens, a letter or digit at each end, no `..`, not an IP address,
 * none of the reserved prefixes and suffixes. Existing buckets may have older, laxer names.
 */
export function isCreatableBucketName(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !name.includes('..') &&
    !IP_ADDRESS.test(name) &&
    !RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)) &&
    !RESERVED_SUFFIXES.some((suffix) => name.endsWith(suffix))
  );
}

/** The region S3 places a bucket in without a LocationConstraint, and names in `x-amz-bucket-region`. */
export const DEFAULT_REGION = 'us-east-1';

/**
 * A LocationConstraint S3 accepts on the us-east-1 endpoint: a region name, or the legacy `EU`.
 * `us-east-1` itself is refused there (it is the default, given by sending no constraint).
 */
export function isValidLocationConstraint(region: string): boolean {
  return region === 'EU' || (region !== DEFAULT_REGION && /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/.test(region));
}

/** The region a LocationConstraint places a bucket in (`EU` is eu-west-1). */
export function regionOfConstraint(constraint: string | null): string {
  if (constraint === null) return DEFAULT_REGION;
  return constraint === 'EU' ? 'eu-west-1' : constraint;
}

/** Created buckets kept in memory: the default of an objstore started on its own. */
export class MemoryBucketRegistry implements ObjstoreBucketRegistry {
  private readonly buckets = new Map<string, CreatedBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  find(name: string): CreatedBucket | undefined {
    return this.buckets.get(name);
  }

  add(bucket: Omit<CreatedBucket, 'createdAt'>): boolean {
    if (this.buckets.has(bucket.name)) return false;
    this.buckets.set(bucket.name, { ...bucket, createdAt: new Date(this.now()).toISOString() });
    return true;
  }

  remove(name: string): void {
    this.buckets.delete(name);
  }

  list(): CreatedBucket[] {
    return [...this.buckets.values()];
  }

  clear(): void {
    this.buckets.clear();
  }
}

/** What CreateBucket comes to for a name. */
export type CreateOutcome = 'created' | 'ownedByCaller' | 'ownedByOther';

export class BucketDirectory {
  private readonly configured: ReadonlySet<string>;
  /** Each bucket of workspace folders, and its keeper's access key id. */
  private readonly keepers: ReadonlyMap<string, string>;

  constructor(
    configured: readonly string[],
    readonly registry: ObjstoreBucketRegistry,
    workspaceFolders: Readonly<Record<string, string>> = {},
  ) {
    this.configured = new Set(configured);
    this.keepers = new Map(Object.entries(workspaceFolders));
  }

  isConfigured(name: string): boolean {
    return this.configured.has(name);
  }

  /** Every bucket: the configured ones, then the created ones. */
  names(): string[] {
    return [...this.configured, ...this.registry.list().map((bucket) => bucket.name)];
  }

  /** The account owning a bucket: null (shared) for a configured one; undefined when there is no such bucket. */
  ownerOf(name: string): Account | undefined {
    if (this.configured.has(name)) return null;
    const created = this.registry.find(name);
    return created === undefined ? undefined : created.workspaceId;
  }

  /**
   * The object keys an access key (null: an unsigned request) reaches in a bucket, as the prefix
   * they start with: '' for the whole bucket, `<workspace_id>/` in a bucket of workspace folders, null for
   * none of it. The shared account's buckets are every account's, a workspace's its own keys'
   * alone (S3 answers AccessDenied for another account's bucket). A name that is no bucket is
   * reached whole, so the operation answers NoSuchBucket.
   */
  reachOf(name: string, key: ObjstoreKey | null): string | null {
    const keeper = this.keepers.get(name);
    if (keeper !== undefined) {
      if (key?.accessKeyId === keeper) return '';
      const account = accountOf(key);
      return account === null ? null : `${account}/`;
    }
    const owner = this.ownerOf(name);
    return owner === undefined || owner === null || (key !== null && owner === accountOf(key)) ? '' : null;
  }

  /** Whether a key reaches an object of a bucket (`objectKey`), or the bucket itself (null: a part of it at least). */
  mayReach(name: string, objectKey: string | null, key: ObjstoreKey | null): boolean {
    const reach = this.reachOf(name, key);
    return reach !== null && (objectKey === null || objectKey.startsWith(reach));
  }

  /** The LocationConstraint a bucket was created with; null for none (and for configured buckets). */
  locationConstraintOf(name: string): string | null {
    return this.registry.find(name)?.region ?? null;
  }

  /** The region a bucket is in, as `x-amz-bucket-region` names it; undefined when there is no such bucket. */
  regionOf(name: string): string | undefined {
    return this.ownerOf(name) === undefined ? undefined : regionOfConstraint(this.locationConstraintOf(name));
  }

  /** Records a new bucket for the key's account, unless the name is taken. */
  create(name: string, key: ObjstoreKey, locationConstraint: string | null): CreateOutcome {
    const caller = accountOf(key);
    const taken = (): CreateOutcome => {
      const owner = this.ownerOf(name);
      // The shared account's buckets are every account's own: CreateBucket on one is the harmless "already yours".
      return owner === null || owner === caller ? 'ownedByCaller' : 'ownedByOther';
    };
    if (this.ownerOf(name) !== undefined) return taken();
    return this.registry.add({ name, workspaceId: caller, region: locationConstraint }) ? 'created' : taken();
  }

  remove(name: string): void {
    this.registry.remove(name);
  }

  /**
   * The buckets a key's account sees in ListBuckets: those it may use, the shared account's (configured or created) and
   * its own.
   */
  visibleTo(key: ObjstoreKey): { name: string; createdAt: string | null; region: string }[] {
    const account = accountOf(key);
    const configured = [...this.configured]
      .filter((name) => this.mayReach(name, null, key))
      .map((name) => ({ name, createdAt: null, region: DEFAULT_REGION }));
    const created = this.registry
      .list()
      .filter((bucket) => bucket.workspaceId === null || bucket.workspaceId === account)
      .map((bucket) => ({ name: bucket.name, createdAt: bucket.createdAt, region: regionOfConstraint(bucket.region) }));
    return [...configured, ...created];
  }
}
