import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inProcessAdminMethods, type AdminMethods } from './admin/client.ts';
import type { InstanceClock } from './admin/instance-clock.ts';
import { adminModule, type ResetScope } from './admin/module.ts';
import { bulkExportsModule } from './bulk-exports/module.ts';
import { bulkExportTables } from './bulk-exports/store.ts';
import type { LimitsPatch } from './config.ts';
import { openCore, type InstanceCore } from './core.ts';
import { deploymentsModule, sourceTarballBucket } from './deployments/module.ts';
import { deploymentTables } from './deployments/store.ts';
import { checkAllowedEndpoints, checkEndpointAliases, DEFAULT_ENDPOINT_ALIASES } from './destinations/endpoints.ts';
import { destinationsModule } from './destinations/module.ts';
import { DEFAULT_FIXTURES_DIR, loadFixtures } from './fixtures/files.ts';
import { fixtureSeeding } from './fixtures/seeding.ts';
import { journalModule } from './journal/module.ts';
import type { RequestObserver } from './journal/observe.ts';
import type { FaultRulesApi, RequestsApi } from './journal/programmatic.ts';
import { createdBucketTables } from './objstore/bucket-store.ts';
import { objstoreTables } from './objstore/key-store.ts';
import { objstoreModule } from './objstore/module.ts';
import { OBJSTORE_STORAGE_KINDS, type ObjstoreStorageKind } from './objstore/types.ts';
import type { GuardDocumentation, SecurityScheme } from './openapi/declarations.ts';
import { httpError } from './openapi/errors.ts';
import { OpenApiHono } from './openapi/routes.ts';
import { openapiRoutes } from './openapi/serve.ts';
import type { ProgressListener } from './progress.ts';
import { writeCounter, type TableSet } from './shared/db.ts';
import { requireToken } from './shared/admin-token.ts';
import {
  browserGuard,
  foreignHostMessage,
  hostGuard,
  isLoopbackName,
  type BrowserGuardOptions,
} from './shared/browser-guard.ts';
import { errorResponse } from './shared/errors.ts';
import { listenFailure, listenHttp } from './shared/http-server.ts';
import { handlerRoutes, starletteRouting } from './shared/routing.ts';
import { ensureTemplate, templateContentKey } from './shared/template-cache.ts';
import { WriteScopedCache } from './shared/write-scoped-cache.ts';
import { snapshotsModule } from './snapshots/module.ts';
import { tracingModule } from './tracing/module.ts';
import { tracingTables } from './tracing/store.ts';
import { uiModule } from './ui/module.ts';
import { inProcessEnv } from './shared/in-process-calls.ts';
import { warehouseModule } from './warehouse/module.ts';
import { WorkspaceStore, workspaceTables } from './workspaces/store.ts';
import { ADMIN_TOKEN_RULE, ADMIN_TOKEN_SHAPE } from './shared/token-shape.ts';

export type { ResetScope } from './admin/module.ts';

export { DEFAULT_FIXTURES_DIR };

export interface CreateOptions {
  /** Where the objstore binds once something uses it. Default 127.0.0.1. */
  host?: string;
  /** The objstore's port once something uses it; 0 picks any free port. Default 0. */
  objstorePort?: number;
  /** Keeps the SQLite database and the objstore there across restarts; default a fresh temp dir removed on stop. */
  dataDir?: string;
  /**
   * Where the objstore keeps objects and upload parts. 'files' (default): under the data dir, each
   * object also a plain file under `filesDir`. 'memory': nothing of the objstore under the data
   * dir, no plain-file view (`filesDir` null; no SQL over exports nor previews), at most
   * `objstore_memory_limit_mb` held, the objects gone when the instance stops.
   */
  objstoreStorage?: ObjstoreStorageKind;
  fixturesDir?: string;
  seed?: number;
  limits?: LimitsPatch;
  /** Starts the clock frozen at the wall time (and freezes it again on reset); default a running clock. */
  freezeClock?: boolean;
  /**
   * Where fixture templates are cached (default $LOCALPLANE_CACHE_DIR, else `localplane` in $XDG_CACHE_HOME or
   * ~/.cache); a folder another user can write to is refused.
   */
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
   * Where the admin API keeps snapshot files, each named by a plain file name (POST
   * /_localplane/snapshot and /restore, /_localplane/snapshots); default `<dataDir>/snapshots`,
   * made (0700) on the first save. `snapshot()`, `restore()` and `importFrom` take any path.
   */
  snapshotsDir?: string;
  /**
   * One line per API and objstore request on the log (method, path, status, ms), the status in
   * ANSI colour with `'colour'`; default off (the CLI turns it on unless --quiet, coloured in a terminal).
   */
  requestLog?: boolean | 'colour';
  /** How many requests the request journal keeps (the oldest go first); default 10,000. */
  journalCapacity?: number;
  /**
   * Host names the admin API and the dashboard answer under besides the loopback ones and `host` (a container's
   * service name, say); any other Host is refused, as a DNS-rebinding page would send.
   */
  allowedHosts?: readonly string[];
  /**
   * Hosts (`host[:port]`, a host alone for any port) a destination's endpoint_url may name besides
   * loopback, the bound host and the production endpoints served locally: a real S3-compatible
   * cluster to export to. Any other endpoint is refused before anything is sent to it.
   */
  allowedEndpoints?: readonly string[];
  /**
   * A token the admin API and the dashboard then require of every request over the network
   * (`Authorization: Bearer <token>`, or a browser opening `/ui?token=<token>` once); for an
   * instance bound to a host other machines reach. In-process requests need none.
   */
  adminToken?: string;
}

export interface StartOptions extends CreateOptions {
  /** 0 picks any free port. Default 9400. */
  port?: number;
  /** 0 picks any free port. Default 9401. */
  objstorePort?: number;
}

/**
 * An instance that answers in process: no API port, and the objstore binds one only once something uses it.
 * Every admin action is a method (AdminMethods: each a request to its route under /_localplane).
 */
export interface InProcessLocalplane extends AdminMethods {
  dataDir: string;
  /**
   * Every object as a plain file: `<filesDir>/<bucket>/<key>`; null with `objstoreStorage: 'memory'`, which has no
   * plain-file view.
   */
  filesDir: string | null;
  /** The snapshots folder (see `snapshotsDir`). */
  snapshotsDir: string;
  clock: InstanceClock;
  /**
   * The API's routes, the admin API included and the dashboard's pages not (`:name` is a path parameter), e.g. to drive
   * a test over every endpoint.
   */
  routes: readonly { method: string; path: string }[];
  /** The request journal of the API and the objstore (GET /_localplane/requests). */
  requests: RequestsApi;
  /** Generic fault rules (POST /_localplane/fault-rules). */
  faultRules: FaultRulesApi;
  /**
   * A request to the API (the admin API included), as hono's `app.request()`: a path such as `/v2/deployments`, a URL,
   * or a Request.
   */
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  fetch(request: Request): Promise<Response>;
  /** The objstore's `http://host:port`; binds it on the first call. */
  objstoreEndpoint(): Promise<string>;
  /** Back to the seed: everything, or `{ workspaceId }` alone (see docs/harness.md). */
  reset(scope?: ResetScope): Promise<void>;
  /** Writes the whole state (database and objstore) to one file, at any path. */
  snapshot(file: string): Promise<{ path: string; bytes: number }>;
  /** Replaces the whole state with a snapshot file's; a bad file throws SnapshotFileError and changes nothing. */
  restore(file: string): Promise<void>;
  stop(): Promise<void>;
}

export interface Localplane extends InProcessLocalplane {
  apiUrl: string;
  objstoreUrl: string;
}

/** Where the dashboard's pages are: not the API, so not among `routes`. */
const DASHBOARD_FOLDER = '/ui';

/** The database's tables, a set per domain, in the order the modules are built. */
const TABLES: readonly TableSet[] = [
  workspaceTables,
  tracingTables,
  objstoreTables,
  createdBucketTables,
  bulkExportTables,
  deploymentTables,
];

/** Builds (once) the cached fixture template that instances with these options start from. */
export function prepareFixtures(options: Pick<StartOptions, 'fixturesDir' | 'seed' | 'cacheDir'> = {}): string {
  const fixtures = loadFixtures(options.fixturesDir ?? DEFAULT_FIXTURES_DIR);
  const seed = options.seed ?? 1;
  return ensureTemplate({
    fixtures,
    seed,
    tables: TABLES,
    seeding: fixtureSeeding(fixtures, seed),
    cacheDir: options.cacheDir,
  });
}

const closeServer = (server: Server) =>
  new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });

/** Ports are checked before anything is created, so a bad one leaves nothing behind. */
function validPort(name: string, port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`${name} must be a whole number from 0 to 65535, got ${port}`);
  return port;
}

function validStorage(kind: string): ObjstoreStorageKind {
  if (!(OBJSTORE_STORAGE_KINDS as readonly string[]).includes(kind)) {
    throw new RangeError(
      `objstoreStorage must be ${OBJSTORE_STORAGE_KINDS.map((name) => `'${name}'`).join(' or ')}, ` +
        `got ${JSON.stringify(kind)}`,
    );
  }
  return kind as ObjstoreStorageKind;
}

function validToken(token: string | undefined): string | undefined {
  if (token !== undefined && !ADMIN_TOKEN_SHAPE.test(token)) throw new RangeError(`adminToken ${ADMIN_TOKEN_RULE}`);
  return token;
}

const ADMIN_TOKEN: SecurityScheme = {
  id: 'Admin Token',
  scheme: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The token localplane was started with (adminToken, --admin-token), which the admin API and the dashboard ' +
      'require over the network',
  },
};

/**
 * What the guards of the admin API and the dashboard answer and read, as the served document lists it on their routes.
 */
function harnessGuard(withToken: boolean): GuardDocumentation {
  const errors = [
    httpError(
      403,
      'A Host that is not a loopback name, the bound host or an allowed name (DNS rebinding), or a change from ' +
        'another origin (a cross-site post)',
      {
        foreign_host: foreignHostMessage('evil.example:9400'),
        cross_origin:
          'Cross-origin POST refused: the admin API and the dashboard take changes only from their own origin ' +
          'http://127.0.0.1:9400, not https://evil.example',
      },
    ),
  ];
  if (!withToken) return { errors };
  errors.unshift(
    httpError(401, 'The instance was started with a token (--admin-token) and the request does not carry it', {
      no_token:
        'the admin API and the dashboard require the token localplane was started with: send Authorization: ' +
        'Bearer <token>, or open /ui?token=<token> in a browser',
    }),
  );
  return { errors, security: [[ADMIN_TOKEN]] };
}

/** An instance built and running its work, with what start() needs to serve it. */
interface Built {
  lp: InProcessLocalplane;
  app: OpenApiHono;
  core: InstanceCore;
  host: string;
  log: (line: string) => void;
}

/**
 * The app the modules' routes are mounted on: every request journaled, a foreign Host refused on
 * every route, errors as `{"detail"}`, unrouted requests answered as Starlette does.
 */
function createApp(observer: RequestObserver, hosts: BrowserGuardOptions, log: (line: string) => void): OpenApiHono {
  const app = new OpenApiHono();
  app.onError((error, c) => errorResponse(c, error, log));
  app.notFound((c) => c.json({ detail: 'Not Found' }, 404));
  app.use('*', observer.api());
  app.use('*', hostGuard(hosts));
  app.use('*', starletteRouting(app));
  return app;
}

/** The composition root: the core, then each domain's module on what it needs, then the routes they contribute. */
async function build(options: CreateOptions, defaultObjstorePort: number): Promise<Built> {
  const startedAt = Date.now();
  const log = options.log ?? ((line: string) => process.stderr.write(`localplane: ${line}\n`));
  const host = options.host ?? '127.0.0.1';
  const objstorePort = validPort('objstorePort', options.objstorePort ?? defaultObjstorePort);
  const objstoreStorage = validStorage(options.objstoreStorage ?? 'files');
  const endpointAliases = options.endpointAliases ?? DEFAULT_ENDPOINT_ALIASES;
  const adminToken = validToken(options.adminToken);
  // Refuses a malformed alias before anything is made.
  checkEndpointAliases(endpointAliases);
  checkAllowedEndpoints(options.allowedEndpoints ?? []);
  const fixtures = loadFixtures(options.fixturesDir ?? DEFAULT_FIXTURES_DIR);
  const core = await openCore(
    options,
    { fixtures, seeding: (seed, progress) => fixtureSeeding(fixtures, seed, progress) },
    TABLES,
    log,
  );
  try {
    const workspaces = new WorkspaceStore(core.db, new WriteScopedCache(writeCounter(core.db)));
    const tracing = tracingModule(core);
    const journal = journalModule(core, {
      capacity: options.journalCapacity,
      requestLog: options.requestLog,
      workspaceOfApiKey: (apiKey) => workspaces.findByApiKey(apiKey)?.id ?? null,
      workspaceExists: (id) => workspaces.find(id) !== undefined,
    });
    const sourceTarballs = sourceTarballBucket();
    const objstore = await objstoreModule(core, {
      host,
      allowedHosts: options.allowedHosts,
      port: objstorePort,
      storage: objstoreStorage,
      observer: journal.observer.objstore(),
      instanceBuckets: [sourceTarballs],
      publicBuckets: fixtures.objstore.public_buckets,
      workspaceExists: (id) => workspaces.find(id) !== undefined,
    });
    const destinations = destinationsModule(core, {
      endpointAliases,
      reach: { allowed: options.allowedEndpoints, boundHost: host },
      embeddedEndpoint: objstore.bind,
    });
    const bulkExports = bulkExportsModule(core, { workspaces, tracing: tracing.store, destinations });
    const deployments = deploymentsModule(core, {
      workspaces,
      tracing: tracing.store,
      destinations,
      sourceTarballs,
      objstoreEndpoint: objstore.bind,
    });
    const warehouse = warehouseModule(core, {
      exports: bulkExports.store,
      objstore: objstore.objstore,
      filesDir: objstore.filesDir,
    });
    const snapshots = snapshotsModule(
      core,
      () =>
        templateContentKey({ fixtures, seed: core.seed, tables: TABLES, seeding: fixtureSeeding(fixtures, core.seed) }),
      options.snapshotsDir,
    );
    const admin = adminModule(core, {
      fixtures,
      workspaces,
      tracing: tracing.store,
      objstore,
      bulkExports,
      deployments,
      endpointAliases,
      startedAt,
    });

    const hosts = { boundHost: host, allowedHosts: options.allowedHosts };
    const app = createApp(journal.observer, hosts, log);
    const guards = [browserGuard(hosts), ...(adminToken === undefined ? [] : [requireToken(adminToken)])];
    for (const folder of ['/_localplane', DASHBOARD_FOLDER])
      app.guardFolder(folder, harnessGuard(adminToken !== undefined), ...guards);
    for (const routes of [
      admin.knobs,
      tracing.adminRoutes,
      deployments.adminRoutes,
      objstore.adminRoutes,
      snapshots.adminRoutes,
      admin.state,
      journal.adminRoutes,
      warehouse.adminRoutes,
    ]) {
      app.route('/_localplane', routes);
    }
    for (const routes of [bulkExports.routes, deployments.routes, tracing.routes, openapiRoutes(() => app.documented)])
      app.route('/', routes);
    app.route(DASHBOARD_FOLDER, uiModule(async (request) => app.fetch(request, inProcessEnv())).routes);

    if (options.importFrom !== undefined) await snapshots.restore(options.importFrom);
    else await core.parts.resume();
    const lp: InProcessLocalplane = {
      ...inProcessAdminMethods(async (request) => app.fetch(request)),
      dataDir: core.dataDir,
      filesDir: objstore.filesDir,
      snapshotsDir: snapshots.folder,
      clock: admin.clock,
      routes: handlerRoutes(app).filter(
        ({ path }) => path !== DASHBOARD_FOLDER && !path.startsWith(`${DASHBOARD_FOLDER}/`),
      ),
      request: async (input, init) => app.request(input, init),
      fetch: async (request) => app.fetch(request),
      objstoreEndpoint: objstore.bind,
      requests: journal.requests,
      faultRules: journal.faultRules,
      reset: admin.reset,
      snapshot: async (file) => snapshots.save(file),
      restore: snapshots.restore,
      stop: () => core.teardown.run(),
    };
    return { lp, app, core, host, log };
  } catch (error) {
    await core.teardown.run();
    throw error;
  }
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
  const { lp, app, core, host, log } = await build(options, 9401);
  try {
    const objstoreUrl = await lp.objstoreEndpoint();
    const server = await listenHttp(app.fetch, { host, port: apiPort, log }).catch((error: unknown) => {
      throw listenFailure('API', host, apiPort, error);
    });
    core.teardown.add('intake', () => closeServer(server));
    const { port } = server.address() as AddressInfo;
    if (!isLoopbackName(host) && options.adminToken === undefined) {
      log(
        `bound to ${host}, which other machines can reach: anyone there can read and change all state through the ` +
          `admin API and the dashboard; require a token with adminToken (--admin-token-file, ` +
          `LOCALPLANE_ADMIN_TOKEN)`,
      );
    }
    return { ...lp, apiUrl: `http://${host}:${port}`, objstoreUrl };
  } catch (error) {
    await lp.stop();
    throw error;
  }
}
