import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { adminRoutes } from './admin/routes.ts';
import { apiRoutes } from './api.ts';
import { BulkExportFaults } from './bulk-exports/faults.ts';
import { ExportRunner } from './bulk-exports/runner.ts';
import { BulkExportStore, bulkExportTables } from './bulk-exports/store.ts';
import { applyLimitsPatch, DEFAULT_LIMITS, type Limits, type LimitsPatch } from './config.ts';
import { RevisionFaults } from './deployments/faults.ts';
import { RevisionLifecycle } from './deployments/lifecycle.ts';
import { DeploymentStore, deploymentTables } from './deployments/store.ts';
import { loadFixtures } from './fixtures/files.ts';
import { ensureTemplate, installTemplate } from './fixtures/template.ts';
import { FaultRules } from './journal/fault-rules.ts';
import { DEFAULT_JOURNAL_CAPACITY, RequestJournal } from './journal/journal.ts';
import { RequestObserver } from './journal/observe.ts';
import { faultRulesApi, requestsApi, type FaultRulesApi, type RequestsApi } from './journal/programmatic.ts';
import { journalRoutes } from './journal/routes.ts';
import { closeObjstoreClients } from './objstore/client.ts';
import { createEndpointResolver, DEFAULT_ENDPOINT_ALIASES } from './objstore/endpoints.ts';
import { ObjstoreKeyStore, objstoreTables } from './objstore/key-store.ts';
import { startObjstore } from './objstore/server.ts';
import type { Objstore } from './objstore/types.ts';
import { createClock } from './shared/clock.ts';
import { createClockControl, type ClockControl } from './shared/clock-control.ts';
import { hasState, openInstanceDb, resetInstanceDb, writeCounter, type Db, type TableSet } from './shared/db.ts';
import { errorResponse } from './shared/errors.ts';
import { listenHttp } from './shared/http-server.ts';
import { createIdGenerator, idReservationsFile, type IdGenerator } from './shared/ids.ts';
import { ResponseCache } from './shared/response-cache.ts';
import { handlerRoutes, starletteRouting } from './shared/routing.ts';
import { Scheduler } from './shared/scheduler.ts';
import { formatTimestamp } from './shared/time.ts';
import { TracingStore, tracingTables } from './tracing/store.ts';
import { WorkspaceStore, workspaceTables } from './workspaces/store.ts';

export const DEFAULT_FIXTURES_DIR = fileURLToPath(new URL('../fixtures', import.meta.url));

export interface StartOptions {
  host?: string;
  /** 0 picks any free port. Default 9400. */
  port?: number;
  /** 0 picks any free port. Default 9401. */
  objstorePort?: number;
  /** Keeps the SQLite database and the objstore there across restarts; default a fresh temp dir removed on stop. */
  dataDir?: string;
  fixturesDir?: string;
  seed?: number;
  limits?: LimitsPatch;
  /** Starts the clock frozen at the wall time (and freezes it again on reset); default a running clock. */
  freezeClock?: boolean;
  /** Where fixture templates are cached (default $LOCALPLANE_CACHE_DIR or <tmp>/localplane-cache). */
  cacheDir?: string;
  /** Diagnostic lines (never secrets); default stderr. */
  log?: (line: string) => void;
  /**
   * Production endpoints served by the embedded objstore (`https://<host>[:<port>]`, `*` for one
   * host label); replaces DEFAULT_ENDPOINT_ALIASES, so spread those in to add to them.
   */
  endpointAliases?: readonly string[];
  /** One line per API and objstore request on the log (method, path, status, ms); default off (the CLI turns it on unless --quiet). */
  requestLog?: boolean;
  /** How many requests the request journal keeps (the oldest go first); default 10,000. */
  journalCapacity?: number;
}

export interface Localplane {
  apiUrl: string;
  objstoreUrl: string;
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
  reset(): Promise<void>;
  stop(): Promise<void>;
}

const TABLES: readonly TableSet[] = [workspaceTables, tracingTables, objstoreTables, bulkExportTables, deploymentTables];

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

export async function start(options: StartOptions = {}): Promise<Localplane> {
  const startedAt = Date.now();
  // The embedded objstore client's notice about future Node versions is not localplane's to print.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const log = options.log ?? ((line: string) => process.stderr.write(`localplane: ${line}\n`));
  const host = options.host ?? '127.0.0.1';
  const apiPort = validPort('port', options.port ?? 9400);
  const objstorePort = validPort('objstorePort', options.objstorePort ?? 9401);
  const seed = options.seed ?? 1;
  const endpointAliases = options.endpointAliases ?? DEFAULT_ENDPOINT_ALIASES;
  const resolveEndpoint = createEndpointResolver(() => objstore.url, endpointAliases);
  const initialLimits = applyLimitsPatch(DEFAULT_LIMITS, options.limits);
  let limits: Limits = initialLimits;
  const fixtures = loadFixtures(options.fixturesDir ?? DEFAULT_FIXTURES_DIR);

  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ? resolve(options.dataDir) : mkdtempSync(join(tmpdir(), 'localplane-'));
  /** What a start that fails half-way must undo, last first. */
  const undo: (() => unknown)[] = [() => ownsDataDir && rmSync(dataDir, { recursive: true, force: true })];
  const failed = async (error: unknown): Promise<never> => {
    for (const step of undo.reverse()) await step();
    throw error;
  };

  let db: Db;
  let ids: IdGenerator;
  let objstore: Objstore;
  try {
    mkdirSync(dataDir, { recursive: true });
    ids = createIdGenerator(seed, idReservationsFile(join(dataDir, 'id-sequence')));
    // The data dir's own fixture template (see installTemplate): it never needs the cache again.
    const seedDb = join(dataDir, 'seed.sqlite');
    if (!existsSync(seedDb)) await installTemplate({ fixtures, seed, tables: TABLES, cacheDir: options.cacheDir, destination: seedDb });
    db = openInstanceDb(join(dataDir, 'localplane.sqlite'), seedDb, TABLES);
    undo.push(() => db.close());
    if (!hasState(db, 'workspaces')) resetInstanceDb(db, TABLES);
  } catch (error) {
    return failed(error);
  }

  const clock = createClock();
  const restartClock = () => {
    clock.reset();
    if (options.freezeClock) clock.freeze();
  };
  restartClock();
  const scheduler = new Scheduler(clock, (label, error) => log(`task "${label}" failed: ${error instanceof Error ? error.stack : String(error)}`));
  const clockControl = createClockControl(clock, scheduler);
  const workspaces = new WorkspaceStore(db);
  const journal = new RequestJournal(options.journalCapacity ?? DEFAULT_JOURNAL_CAPACITY);
  const faultRules = new FaultRules(seed);
  const observer = new RequestObserver({
    journal,
    faultRules,
    clock,
    workspaceOfApiKey: (apiKey) => workspaces.findByApiKey(apiKey)?.id ?? null,
    requestLog: options.requestLog ? log : null,
    colour: options.log === undefined && process.stderr.isTTY && !process.env.NO_COLOR,
  });
  const tracing = new TracingStore(db);
  const keyStore = new ObjstoreKeyStore(db);
  const filesDir = join(dataDir, 'files');
  const buckets = keyStore.buckets();
  try {
    objstore = await startObjstore({
      host,
      port: objstorePort,
      directory: join(dataDir, 'objstore'),
      keys: keyStore,
      buckets,
      // A --data-dir kept from before a bucket joined the fixtures does not have it.
      publicBuckets: fixtures.objstore.public_buckets.filter((bucket) => buckets.includes(bucket)),
      filesDirectory: filesDir,
      log,
      observer: observer.objstore(),
    });
    undo.push(() => objstore.close());
  } catch (error) {
    return failed(listenFailure('objstore', host, objstorePort, error));
  }
  const faults = new BulkExportFaults();
  const store = new BulkExportStore(db);
  const deployments = new DeploymentStore(db);
  const revisionFaults = new RevisionFaults();
  const lifecycle = new RevisionLifecycle({ store: deployments, scheduler, clock, limits: () => limits, faults: revisionFaults });
  const runner = new ExportRunner({ store, tracing, scheduler, clock, ids, limits: () => limits, faults, resolveEndpoint });

  const reset = async () => {
    await scheduler.cancelAll();
    runner.reset();
    resetInstanceDb(db, TABLES);
    faults.clear();
    revisionFaults.clear();
    ids.reset();
    restartClock();
    limits = initialLimits;
    lifecycle.resume();
    await objstore.reset();
    journal.reset();
    faultRules.reset();
  };

  const app = new Hono();
  app.onError((error, c) => errorResponse(c, error, log));
  app.notFound((c) => c.json({ detail: 'Not Found' }, 404));
  app.use('*', observer.api());
  app.use('*', starletteRouting(app));
  app.route(
    '/_localplane',
    adminRoutes({
      fixtures,
      workspaces,
      tracing,
      deployments,
      objstore,
      objstoreKeys: keyStore,
      endpointAliases,
      clock: clockControl,
      faults,
      revisionFaults,
      lifecycle,
      limits: { get: () => limits, patch: (changes) => (limits = applyLimitsPatch(limits, changes)) },
      pendingTasks: () => scheduler.pending().map((task) => ({ due_at: formatTimestamp(task.dueAt), label: task.label })),
      reset,
      startedAt,
      seed,
    }),
  );
  app.route('/_localplane', journalRoutes({ journal, faultRules }));
  app.route(
    '/',
    apiRoutes({
      bulkExports: { store, tracing, workspaces, runner, clock, ids, faults, resolveEndpoint, limits: () => limits },
      deployments: { store: deployments, workspaces, tracing, clock, ids, lifecycle, responseCache: new ResponseCache(writeCounter(db)) },
    }),
  );

  let server: Server;
  try {
    server = await listenHttp(app.fetch, { host, port: apiPort, log });
  } catch (error) {
    return failed(listenFailure('API', host, apiPort, error));
  }
  runner.recover();
  lifecycle.resume();
  const { port } = server.address() as AddressInfo;

  let stopping: Promise<void> | null = null;
  return {
    apiUrl: `http://${host}:${port}`,
    objstoreUrl: objstore.url,
    dataDir,
    filesDir,
    clock: clockControl,
    routes: handlerRoutes(app),
    requests: requestsApi(journal),
    faultRules: faultRulesApi(faultRules),
    reset,
    stop: () =>
      (stopping ??= (async () => {
        observer.stop();
        await scheduler.stop();
        await closeServer(server);
        await objstore.close();
        closeObjstoreClients();
        db.close();
        if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

