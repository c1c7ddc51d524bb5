import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminRoutes } from './admin/routes.ts';
import { snapshotRoutes } from './admin/snapshots.ts';
import { stateRoutes } from './admin/state.ts';
import { apiRoutes } from './api.ts';
import { BulkExportFaults } from './bulk-exports/faults.ts';
import { EncoderThread } from './bulk-exports/encoder-thread.ts';
import { ExportRunner } from './bulk-exports/runner.ts';
import { BulkExportStore, bulkExportTables } from './bulk-exports/store.ts';
import { applyLimitsPatch, DEFAULT_LIMITS, type Limits, type LimitsPatch } from './config.ts';
import { RevisionFaults } from './deployments/faults.ts';
import { DeploymentDeletions } from './deployments/deletions.ts';
import { RevisionLifecycle } from './deployments/lifecycle.ts';
import { SOURCE_TARBALL_BUCKET, SourceUploads, sourceUploadKey } from './deployments/source-uploads.ts';
import { DeploymentStore, deploymentTables } from './deployments/store.ts';
import { loadFixtures } from './fixtures/files.ts';
import { ensureTemplate, installTemplate, templateContentKey } from './fixtures/template.ts';
import { FaultRules } from './journal/fault-rules.ts';
import { DEFAULT_JOURNAL_CAPACITY, RequestJournal } from './journal/journal.ts';
import { RequestObserver } from './journal/observe.ts';
import { faultRulesApi, requestsApi, type FaultRulesApi, type RequestsApi } from './journal/programmatic.ts';
import { journalRoutes } from './journal/routes.ts';
import { ObjstoreClients } from './destinations/clients.ts';
import { OpenApiHono } from './openapi/routes.ts';
import { openapiRoutes } from './openapi/serve.ts';
import { createEndpointResolver, DEFAULT_ENDPOINT_ALIASES } from './destinations/endpoints.ts';
import { ObjstoreBucketStore, createdBucketTables } from './objstore/bucket-store.ts';
import { ObjstoreKeyStore, objstoreTables } from './objstore/key-store.ts';
import { createObjstore } from './objstore/objstore.ts';
import type { EmbeddedObjstore } from './objstore/types.ts';
import { createClock } from './shared/clock.ts';
import { createClockControl, type ClockControl } from './shared/clock-control.ts';
import { hasState, openInstanceDb, resetInstanceDb, resetWorkspaceRows, writeCounter, type Db, type TableSet } from './shared/db.ts';
import { errorResponse, notFound } from './shared/errors.ts';
import { listenHttp } from './shared/http-server.ts';
import { printableError } from './shared/log-text.ts';
import { createIdGenerator, idReservationsFile, type IdGenerator } from './shared/ids.ts';
import { makePrivateFolder } from './shared/private-files.ts';
import { ResetRegistry } from './shared/resets.ts';
import { invalidRow } from './shared/stored-rows.ts';
import { WriteScopedCache } from './shared/write-scoped-cache.ts';
import { handlerRoutes, starletteRouting } from './shared/routing.ts';
import { Scheduler } from './shared/scheduler.ts';
import { formatTimestamp } from './shared/time.ts';
import type { ProgressListener } from './progress.ts';
import { Snapshots } from './snapshots/snapshots.ts';
import { TracingStore, tracingTables } from './tracing/store.ts';
import { WorkspaceStore, workspaceTables } from './workspaces/store.ts';

export const DEFAULT_FIXTURES_DIR = fileURLToPath(new URL('../fixtures', import.meta.url));

export interface CreateOptions {
  /** Where the objstore binds once something uses it. Default 127.0.0.1. */
  host?: string;
  /** The objstore's port once something uses it; 0 picks any free port. Default 0. */
  objstorePort?: number;
  /** Keeps the SQLite database and the objstore there across restarts; default a fresh temp dir removed on stop. */
  dataDir?: string;
  fixturesDir?: string;
  seed?: number;
  limits?: LimitsPatch;
  /** Starts the clock frozen at the wall time (and freezes it again on reset); default a running clock. */
  freezeClock?: boolean;
  /** Where fixture templates are cached (default $LOCALPLANE_CACHE_DIR, else `localplane` in $XDG_CACHE_HOME or ~/.cache); a folder another user can write to is refused. */
  cacheDir?: string;
  /** Diagnostic lines (never secrets); default stderr. */
  log?: (line: string) => void;
  /**
   * Production endpoints served by the embedded objstore (`https://<host>[:<port>]`, `*` for one
   * host label); replaces DEFAULT_ENDPOINT_ALIASES, so spread those in to add to them.
   */
  endpointAliases?: readonly string[];
  /** Told how far long work has got: a fixture template being built, exports running (the CLI's terminal display). */
  progress?: ProgressListener;
  /** A snapshot file (see `snapshot()`) the instance starts from instead of the seed. */
  importFrom?: string;
  /**
   * One line per API and objstore request on the log (method, path, status, ms), the status in
   * ANSI colour with `'colour'`; default off (the CLI turns it on unless --quiet, coloured in a terminal).
   */
  requestLog?: boolean | 'colour';
  /** How many requests the request journal keeps (the oldest go first); default 10,000. */
  journalCapacity?: number;
}

export interface StartOptions extends CreateOptions {
  /** 0 picks any free port. Default 9400. */
  port?: number;
  /** 0 picks any free port. Default 9401. */
  objstorePort?: number;
}

/** Which state a reset puts back to the seed: everything, or one workspace's resources. */
export interface ResetScope {
  workspaceId?: string;
}

/** An instance that answers in process: no API port, and the objstore binds one only once something uses it. */
export interface InProcessLocalplane {
  dataDir: string;
  /** Every object as a plain file: `<filesDir>/<bucket>/<key>`. */
  filesDir: string;
  clock: ClockControl;
  /** The API's routes (`:name` is a path parameter), e.g. to drive a test over every endpoint. */
  routes: readonly { method: string; path: string }[];
  /** The request journal of the API and the objstore (GET /_localplane/requests). */
  requests: RequestsApi;
  /** Generic fault rules (POST /_localplane/fault-rules). */
  faultRules: FaultRulesApi;
  /** A request to the API (the admin API included), as hono's `app.request()`: a path such as `/v2/deployments`, a URL, or a Request. */
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  fetch(request: Request): Promise<Response>;
  /** The objstore's `http://host:port`; binds it on the first call. */
  objstoreEndpoint(): Promise<string>;
  /** Back to the seed: everything, or `{ workspaceId }` alone (see docs/harness.md). */
  reset(scope?: ResetScope): Promise<void>;
  /** Writes the whole state (database and objstore) to one file. */
  snapshot(file: string): Promise<{ path: string; bytes: number }>;
  /** Replaces the whole state with a snapshot file's; a bad file throws SnapshotFileError and changes nothing. */
  restore(file: string): Promise<void>;
  stop(): Promise<void>;
}

export interface Localplane extends InProcessLocalplane {
  apiUrl: string;
  objstoreUrl: string;
}

const TABLES: readonly TableSet[] = [workspaceTables, tracingTables, objstoreTables, createdBucketTables, bulkExportTables, deploymentTables];

/** Builds (once) the cached fixture template that instances with these options start from. */
export function prepareFixtures(options: Pick<StartOptions, 'fixturesDir' | 'seed' | 'cacheDir'> = {}): string {
  const fixtures = loadFixtures(options.fixturesDir ?? DEFAULT_FIXTURES_DIR);
  return ensureTemplate({ fixtures, seed: options.seed ?? 1, tables: TABLES, cacheDir: options.cacheDir });
}

const closeServer = (server: Server) =>
  new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });

/** A listen failure in words that name the server and the port. */
function listenFailure(server: string, host: string, port: number, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') return new Error(`the ${server} port ${port} on ${host} is already in use`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new Error(`cannot listen on ${host}: it is not an address of this machine`);
  return error;
}

/** Ports are checked before anything is created, so a bad one leaves nothing behind. */
function validPort(name: string, port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${name} must be a whole number from 0 to 65535, got ${port}`);
  return port;
}

/**
 * A kept data dir's database may have been written by someone else (a data dir checked into a
 * repository): rows that would make the instance reach outside its own files (a bucket name
 * becomes a folder) are refused as a restore refuses them, before anything reads them.
 */
function refuseUnusableRows(db: Db, path: string): void {
  const problem = invalidRow(db, TABLES, 'main');
  if (problem !== undefined) throw new Error(`${path} holds data localplane cannot use: ${problem}: remove that data dir or choose another --data-dir`);
}

/** An instance built and running its work, with what start() needs to serve it and to undo a failed start. */
interface Built {
  lp: InProcessLocalplane;
  app: OpenApiHono;
  objstore: EmbeddedObjstore;
  host: string;
  objstorePort: number;
  log: (line: string) => void;
  /** Undoes the build (a start that fails to listen): no data dir left behind. */
  discard(): Promise<void>;
  /** Things to close on stop before the objstore and the database, last added first (start's API server). */
  onStop: (() => Promise<void>)[];
}

async function build(options: CreateOptions, defaultObjstorePort: number): Promise<Built> {
  const startedAt = Date.now();
  // The embedded objstore client's notice about future Node versions is not localplane's to print.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const log = options.log ?? ((line: string) => process.stderr.write(`localplane: ${line}\n`));
  const host = options.host ?? '127.0.0.1';
  const objstorePort = validPort('objstorePort', options.objstorePort ?? defaultObjstorePort);
  const seed = options.seed ?? 1;
  const endpointAliases = options.endpointAliases ?? DEFAULT_ENDPOINT_ALIASES;
  const initialLimits = applyLimitsPatch(DEFAULT_LIMITS, options.limits);
  let limits: Limits = initialLimits;
  const fixtures = loadFixtures(options.fixturesDir ?? DEFAULT_FIXTURES_DIR);

  // Refuses a malformed alias before anything is made.
  const embeddedEndpoint = createEndpointResolver(() => objstore.url!, endpointAliases);

  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ? resolve(options.dataDir) : mkdtempSync(join(tmpdir(), 'localplane-'));
  /** What a build that fails half-way must undo, last first. */
  const undo: (() => unknown)[] = [() => ownsDataDir && rmSync(dataDir, { recursive: true, force: true })];
  const discard = async () => {
    for (const step of undo.reverse()) await step();
  };
  const failed = async (error: unknown): Promise<never> => {
    await discard();
    throw error;
  };

  const resets = new ResetRegistry();
  let db: Db;
  let ids: IdGenerator;
  let objstore: EmbeddedObjstore;
  // The data dir's own fixture template (see installTemplate): it never needs the cache again.
  const database = { path: join(dataDir, 'localplane.sqlite'), templatePath: join(dataDir, 'seed.sqlite') };
  try {
    makePrivateFolder(dataDir);
    ids = createIdGenerator(seed, idReservationsFile(join(dataDir, 'id-sequence')));
    if (!existsSync(database.templatePath)) {
      await installTemplate({ fixtures, seed, tables: TABLES, cacheDir: options.cacheDir, destination: database.templatePath, progress: options.progress });
    }
    db = openInstanceDb(database.path, database.templatePath, TABLES);
    undo.push(() => db.close());
    if (!hasState(db, 'workspaces')) resetInstanceDb(db, TABLES);
    else refuseUnusableRows(db, database.path);
  } catch (error) {
    return failed(error);
  }

  const clock = createClock();
  const restartClock = () => {
    clock.reset();
    if (options.freezeClock) clock.freeze();
  };
  restartClock();
  const scheduler = new Scheduler(clock, (label, error) => log(`task "${label}" failed: ${printableError(error)}`));
  undo.push(() => scheduler.stop());
  resets.register('scheduler', { stop: () => scheduler.cancelAll() });
  const clockControl = createClockControl(clock, scheduler);
  const workspaces = new WorkspaceStore(db, new WriteScopedCache(writeCounter(db)));
  const journal = new RequestJournal(options.journalCapacity ?? DEFAULT_JOURNAL_CAPACITY);
  const faultRules = new FaultRules(seed);
  const observer = new RequestObserver({
    journal,
    faultRules,
    clock,
    workspaceOfApiKey: (apiKey) => workspaces.findByApiKey(apiKey)?.id ?? null,
    requestLog: options.requestLog ? log : null,
    colour: options.requestLog === 'colour',
  });
  const tracing = new TracingStore(db);
  const keyStore = new ObjstoreKeyStore(db);
  const filesDir = join(dataDir, 'files');
  const buckets = keyStore.buckets();
  const uploadKey = sourceUploadKey();
  try {
    objstore = await createObjstore({
      host,
      port: objstorePort,
      directory: join(dataDir, 'objstore'),
      keys: { find: (accessKeyId) => (accessKeyId === uploadKey.accessKeyId ? uploadKey : keyStore.find(accessKeyId)) },
      // The instance's own bucket beside the fixtures' ones: source tarballs of remote builds.
      buckets: [...buckets, SOURCE_TARBALL_BUCKET],
      createdBuckets: new ObjstoreBucketStore(db, () => Math.floor(clock.now() / 1000)),
      // A --data-dir kept from before a bucket joined the fixtures does not have it.
      publicBuckets: fixtures.objstore.public_buckets.filter((bucket) => buckets.includes(bucket)),
      // Each workspace's keys reach its own folder of source tarballs; upload URLs are signed by the keeper.
      workspaceFolders: { [SOURCE_TARBALL_BUCKET]: uploadKey.accessKeyId },
      filesDirectory: filesDir,
      log,
      observer: observer.objstore(),
    });
    undo.push(() => objstore.close());
  } catch (error) {
    return failed(error);
  }
  const objstoreClients = new ObjstoreClients();
  const bindObjstore = async () => {
    try {
      return await objstore.listen();
    } catch (error) {
      throw listenFailure('objstore', host, objstorePort, error);
    }
  };
  // A destination check or an export is what first needs the objstore's port.
  const resolveEndpoint = async (endpointUrl: string | null | undefined) => {
    await bindObjstore();
    return embeddedEndpoint(endpointUrl);
  };
  const faults = new BulkExportFaults();
  const store = new BulkExportStore(db);
  const deployments = new DeploymentStore(db);
  const revisionFaults = new RevisionFaults();
  const lifecycle = new RevisionLifecycle({ store: deployments, scheduler, clock, limits: () => limits, faults: revisionFaults });
  const deletions = new DeploymentDeletions({ store: deployments, scheduler, clock, limits: () => limits, lifecycle });
  const sourceUploads = new SourceUploads({ key: uploadKey, ids, objstoreClients, objstoreEndpoint: bindObjstore });
  const encoder = new EncoderThread(database);
  const runner = new ExportRunner({ store, tracing, scheduler, clock, ids, limits: () => limits, faults, objstoreClients, resolveEndpoint, encoder, progress: options.progress });

  resets.register('export runner', {
    stop: () => runner.stop(),
    resume: () => runner.recover(),
    stopWorkspace: (workspaceId) => runner.stopWorkspace(workspaceId),
  });
  resets.register('revision lifecycle', {
    resume: () => lifecycle.resume(),
    stopWorkspace: (workspaceId) => lifecycle.stopWorkspace(workspaceId),
    resumeWorkspace: (workspaceId) => lifecycle.resumeWorkspace(workspaceId),
  });
  resets.register('deployment deletions', {
    resume: () => deletions.resume(),
    stopWorkspace: (workspaceId) => deletions.stopWorkspace(workspaceId),
    resumeWorkspace: (workspaceId) => deletions.resumeWorkspace(workspaceId),
  });
  resets.register('database', {
    inSnapshots: true,
    reset: () => resetInstanceDb(db, TABLES),
    resetWorkspace: (workspaceId) => resetWorkspaceRows(db, TABLES, workspaceId),
  });
  resets.register('bulk-export faults', { reset: () => faults.clear(), resetWorkspace: (workspaceId) => faults.clearWorkspace(workspaceId) });
  resets.register('revision faults', {
    reset: () => revisionFaults.clear(),
    stopWorkspace: (workspaceId) => revisionFaults.clearDeployments(new Set(deployments.deploymentsOf(workspaceId).map((deployment) => deployment.id))),
  });
  resets.register('ids', { inSnapshots: true, reset: () => ids.reset() });
  resets.register('clock', { inSnapshots: true, reset: restartClock });
  resets.register('limits', {
    inSnapshots: true,
    reset: () => {
      limits = initialLimits;
    },
  });
  // After the database: a one-workspace reset has dropped the workspace's created buckets there.
  resets.register('objstore', { inSnapshots: true, reset: () => objstore.reset(), resetWorkspace: () => objstore.pruneBuckets() });
  resets.register('request journal', { reset: () => journal.reset() });
  resets.register('fault rules', { reset: () => faultRules.reset() });

  const snapshots = new Snapshots({
    db,
    tables: TABLES,
    objstore,
    ids,
    clock,
    limits: { get: () => limits, set: (restored) => (limits = restored) },
    resets,
    template: () => templateContentKey(fixtures, seed, TABLES),
    seed,
    scratchDir: dataDir,
  });
  const reset = async (scope: ResetScope = {}) => {
    if (scope.workspaceId === undefined) return resets.resetAll();
    if (!workspaces.find(scope.workspaceId)) throw notFound(`Workspace ${scope.workspaceId} not found`);
    return resets.resetWorkspace(scope.workspaceId);
  };

  const app = new OpenApiHono();
  app.onError((error, c) => errorResponse(c, error, log));
  app.notFound((c) => c.json({ detail: 'Not Found' }, 404));
  app.use('*', observer.api());
  app.use('*', starletteRouting(app));
  const pendingTasks = () => scheduler.pending().map((task) => ({ due_at: formatTimestamp(task.dueAt), label: task.label }));
  app.route(
    '/_localplane',
    adminRoutes({
      fixtures,
      workspaces,
      tracing,
      deployments,
      objstore,
      objstoreEndpoint: bindObjstore,
      objstoreKeys: keyStore,
      endpointAliases,
      clock: clockControl,
      faults,
      revisionFaults,
      lifecycle,
      limits: { get: () => limits, patch: (changes) => (limits = applyLimitsPatch(limits, changes)) },
      pendingTasks,
      reset,
      startedAt,
      seed,
    }),
  );
  app.route('/_localplane', snapshotRoutes({ save: (path) => snapshots.save(path), restore: (path) => snapshots.restore(path) }));
  app.route(
    '/_localplane',
    stateRoutes({ workspaces, tracing, bulkExports: store, deployments, objstore, objstoreKeys: keyStore, clock: clockControl, limits: () => limits, faults, revisionFaults, pendingTasks }),
  );
  app.route('/_localplane', journalRoutes({ journal, faultRules }));
  app.route(
    '/',
    apiRoutes({
      bulkExports: { store, tracing, workspaces, runner, clock, ids, faults, objstoreClients, resolveEndpoint, limits: () => limits },
      deployments: { store: deployments, workspaces, tracing, clock, ids, lifecycle, deletions, sourceUploads, responseCache: new WriteScopedCache(writeCounter(db)) },
    }),
  );
  app.route('/', openapiRoutes(() => app.documented));

  try {
    if (options.importFrom !== undefined) await snapshots.restore(options.importFrom);
    else await resets.resume();
  } catch (error) {
    return failed(error);
  }

  const onStop: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | null = null;
  const lp: InProcessLocalplane = {
    dataDir,
    filesDir,
    clock: clockControl,
    routes: handlerRoutes(app),
    request: async (input, init) => app.request(input, init),
    fetch: async (request) => app.fetch(request),
    objstoreEndpoint: bindObjstore,
    requests: requestsApi(journal),
    faultRules: faultRulesApi(faultRules),
    reset,
    snapshot: async (file) => snapshots.save(file),
    restore: (file) => snapshots.restore(file),
    stop: () =>
      (stopping ??= (async () => {
        observer.stop();
        await scheduler.stop();
        // An export's last upload outlives its step: it lands before the store closes and the data dir goes.
        await runner.stop();
        for (const close of onStop.reverse()) await close();
        await encoder.close();
        await objstore.close();
        objstoreClients.close();
        snapshots.discard();
        db.close();
        if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
  return { lp, app, objstore, host, objstorePort, log, discard, onStop };
}

/**
 * An instance without an API port, driven with `request()`/`fetch()` (as hono's `app.request()`).
 * Its objstore binds a port only once something uses it: a destination check, an export, or
 * `objstoreEndpoint()` (including `GET /_localplane/fixtures`, which hands the endpoint out).
 */
export async function createLocalplane(options: CreateOptions = {}): Promise<InProcessLocalplane> {
  return (await build(options, 0)).lp;
}

/** An instance listening on its API port, with its objstore listening too. */
export async function start(options: StartOptions = {}): Promise<Localplane> {
  const apiPort = validPort('port', options.port ?? 9400);
  const built = await build(options, 9401);
  const { lp, app, objstore, host, objstorePort, log } = built;
  let objstoreUrl: string;
  try {
    objstoreUrl = await objstore.listen();
  } catch (error) {
    await built.discard();
    throw listenFailure('objstore', host, objstorePort, error);
  }
  let server: Server;
  try {
    server = await listenHttp(app.fetch, { host, port: apiPort, log });
  } catch (error) {
    await built.discard();
    throw listenFailure('API', host, apiPort, error);
  }
  built.onStop.push(() => closeServer(server));
  const { port } = server.address() as AddressInfo;
  return { ...lp, apiUrl: `http://${host}:${port}`, objstoreUrl };
}
