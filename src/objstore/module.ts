import { join } from 'node:path';
import { readSnapshotDatabase, type CheckedDatabase, type InstanceCore } from '../core.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { listenFailure } from '../shared/http-server.ts';
import type { SnapshotSection } from '../shared/state-parts.ts';
import { createdBucketNames, ObjstoreBucketStore } from './bucket-store.ts';
import { objstoreBrowserRoutes } from './browser-routes.ts';
import { objstoreKeyRoutes } from './key-routes.ts';
import { ObjstoreKeyStore } from './key-store.ts';
import { createObjstore } from './objstore.ts';
import type {
  EmbeddedObjstore,
  ObjstoreKey,
  ObjstoreObserver,
  ObjstoreStorageKind,
  ObjstoreTreeEntry,
  StagedContents,
} from './types.ts';

/**
 * A private bucket the instance keeps for itself, one folder per workspace, reached in full by its keeper's key alone.
 */
export interface InstanceBucket {
  bucket: string;
  keeper: ObjstoreKey;
}

export interface ObjstoreModuleOptions {
  host: string;
  /** Host names it answers under besides the loopback ones and `host`. */
  allowedHosts?: readonly string[];
  port: number;
  /** With 'memory' the objstore writes nothing under the data dir: no plain-file view. */
  storage: ObjstoreStorageKind;
  observer: ObjstoreObserver;
  instanceBuckets: readonly InstanceBucket[];
  /** The fixtures' buckets anyone may read without signing. */
  publicBuckets: readonly string[];
  /** Whether a workspace exists, for a key pair added for one. */
  workspaceExists(workspaceId: string): boolean;
}

export interface ObjstoreModule {
  objstore: EmbeddedObjstore;
  keys: ObjstoreKeyStore;
  /**
   * Every object as a plain file: `<filesDir>/<bucket>/<key>`; null with memory storage, which has no plain-file view.
   */
  filesDir: string | null;
  /** Binds the objstore's port if it is not yet bound, and gives its URL. */
  bind(): Promise<string>;
  /** /_localplane/objstore/keys and the object browser, /_localplane/objstore/buckets. */
  adminRoutes: OpenApiHono;
}

/** The embedded objstore with the fixtures' buckets and keys, its state part, its stop and its key pairs' knobs. */
export async function objstoreModule(core: InstanceCore, options: ObjstoreModuleOptions): Promise<ObjstoreModule> {
  const keys = new ObjstoreKeyStore(core.db);
  const buckets = keys.buckets();
  const keepers = new Map(options.instanceBuckets.map(({ keeper }) => [keeper.accessKeyId, keeper]));
  const filesDir = options.storage === 'memory' ? null : join(core.dataDir, 'files');
  const objstore = await createObjstore({
    host: options.host,
    allowedHosts: options.allowedHosts,
    port: options.port,
    directory: join(core.dataDir, 'objstore'),
    storage: options.storage,
    memoryBudgetBytes: () => core.limits.get().objstore_memory_limit_mb * 1024 * 1024,
    keys: { find: (accessKeyId) => keepers.get(accessKeyId) ?? keys.find(accessKeyId) },
    buckets: [...buckets, ...options.instanceBuckets.map(({ bucket }) => bucket)],
    createdBuckets: new ObjstoreBucketStore(core.db, () => Math.floor(core.clock.now() / 1000)),
    // A --data-dir kept from before a bucket joined the fixtures does not have it.
    publicBuckets: options.publicBuckets.filter((bucket) => buckets.includes(bucket)),
    workspaceFolders: Object.fromEntries(
      options.instanceBuckets.map(({ bucket, keeper }) => [bucket, keeper.accessKeyId]),
    ),
    filesDirectory: filesDir ?? undefined,
    log: core.log,
    observer: options.observer,
  });
  core.teardown.add('resources', () => objstore.close());
  // After the database: a one-workspace reset has dropped the workspace's created buckets there.
  core.parts.register('objstore', {
    reset: () => objstore.reset(),
    resetWorkspace: () => objstore.pruneBuckets(),
    snapshot: objstoreSection(core, objstore),
  });
  const bind = async () => {
    try {
      return await objstore.listen();
    } catch (error) {
      throw listenFailure('objstore', options.host, options.port, error);
    }
  };
  const adminRoutes = new OpenApiHono('admin')
    .route('/', objstoreKeyRoutes({ keys, workspaceExists: options.workspaceExists }))
    .route('/', objstoreBrowserRoutes(objstore.browser));
  return { objstore, keys, filesDir, bind, adminRoutes };
}

interface CheckedContents {
  entries: readonly ObjstoreTreeEntry[];
  /** The buckets the snapshot's database holds besides the configured ones. */
  createdBuckets: string[];
}

/** The storage's whole tree; a restore writes it beside the storage and renames it into place. */
function objstoreSection(
  core: InstanceCore,
  objstore: EmbeddedObjstore,
): SnapshotSection<ObjstoreTreeEntry[], CheckedContents, StagedContents> {
  return {
    field: 'objstore',
    save: () => objstore.contents(),
    check: (entries, earlier) => {
      const createdBuckets = readSnapshotDatabase(core, earlier.get('database') as CheckedDatabase, (db) =>
        createdBucketNames(db, 'snapshot'),
      );
      const problem = objstore.contentsProblem(entries, createdBuckets);
      if (problem !== undefined) throw new Error(problem);
      return { entries, createdBuckets };
    },
    stage: ({ entries, createdBuckets }) => {
      try {
        return objstore.stageContents(entries, createdBuckets);
      } catch (error) {
        throw new Error(`its objstore cannot be written: ${(error as Error).message}`, { cause: error });
      }
    },
    unstage: (staged) => staged.discard(),
    load: (_, staged) => staged.install(),
  };
}
