import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { parserErrorReply } from '../shared/http-server.ts';
import { InFlight } from '../shared/in-flight.ts';
import { closeConnectionsLingering, LINGER_MS } from '../shared/lingering-close.ts';
import { BucketDirectory, MemoryBucketRegistry } from './bucket-directory.ts';
import { createObjectBrowser } from './object-browser.ts';
import { createFileStorage } from './storage/files-storage.ts';
import { createMemoryStorage } from './storage/memory-storage.ts';
import type { ObjstoreStorage } from './storage/storage.ts';
import { FileView } from './file-view/file-view.ts';
import type { GatewayHandler } from './server/gateway.ts';
import { isValidBucketName } from './server/target.ts';
import type { EmbeddedObjstore, Objstore, ObjstoreOptions } from './types.ts';
import { hostAllowList } from '../shared/browser-guard.ts';

function validateOptions(options: ObjstoreOptions): void {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new RangeError(`objstore: invalid port ${options.port}`);
  }
  if (!options.directory) throw new TypeError('objstore: directory is required');
  for (const bucket of options.buckets) {
    if (!isValidBucketName(bucket)) throw new TypeError(`objstore: invalid bucket name ${JSON.stringify(bucket)}`);
  }
  for (const bucket of options.publicBuckets ?? []) {
    if (!options.buckets.includes(bucket))
      throw new TypeError(`objstore: public bucket ${JSON.stringify(bucket)} is not a bucket`);
  }
  for (const bucket of Object.keys(options.workspaceFolders ?? {})) {
    if (!options.buckets.includes(bucket) || options.publicBuckets?.includes(bucket)) {
      throw new TypeError(`objstore: bucket of workspace folders ${JSON.stringify(bucket)} is not a private bucket`);
    }
  }
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * How long an idle client connection stays open. Node's default of 5 s is shorter than the
 * pauses S3 clients commonly leave between requests (a test between its steps, a slowed
 * export run): a client that reuses a connection the storage has just dropped fails with
 * "socket hang up" on its next request.
 */
const KEEP_ALIVE_TIMEOUT_MS = 20_000;

/** The memory storage's budget when none is given: objstore_memory_limit_mb's default. */
const DEFAULT_MEMORY_BUDGET_BYTES = 1024 * 1024 * 1024;

/**
 * Creates the object storage without binding a port: the storage, the file view and the gateway
 * are ready, and `listen()` binds host:port on first use (an in-process instance whose tests
 * never touch the objstore binds nothing).
 */
export async function createObjstore(options: ObjstoreOptions): Promise<EmbeddedObjstore> {
  validateOptions(options);
  const buckets = [...options.buckets];
  const directory = new BucketDirectory(
    buckets,
    options.createdBuckets ?? new MemoryBucketRegistry(),
    options.workspaceFolders,
  );
  const files = options.storage === 'memory' ? null : createFileStorage(options.directory);
  const storage: ObjstoreStorage =
    files ?? createMemoryStorage({ budgetBytes: options.memoryBudgetBytes ?? (() => DEFAULT_MEMORY_BUDGET_BYTES) });
  const fileView =
    files && options.filesDirectory
      ? new FileView({
          directory: options.filesDirectory,
          storage: files,
          buckets: () => directory.names(),
          log: options.log ?? (() => {}),
        })
      : undefined;
  /**
   * Removes the storage's buckets the directory does not hold (a one-workspace reset dropped them from the registry).
   */
  const pruneBuckets = async () => {
    const known = new Set(directory.names());
    for (const name of await storage.bucketNames()) {
      if (known.has(name)) continue;
      await storage.deleteBucket(name);
      await fileView?.syncBucket(name);
    }
  };
  await storage.ensureBuckets(directory.names());
  await fileView?.rebuild();

  // The gateway (S3 operations, SigV4, checksums, XML) is a third of what a start would load: it
  // loads with the first request instead, which waits for it.
  let gateway: GatewayHandler | null = null;
  let loadingGateway: Promise<GatewayHandler> | null = null;
  const loadGateway = () =>
    (loadingGateway ??= import('./server/gateway.ts').then(
      ({ createGateway }) =>
        (gateway = createGateway({
          keys: options.keys,
          storage,
          buckets: directory,
          publicBuckets: new Set(options.publicBuckets),
          now: options.now,
          observer: options.observer,
          fileView,
          minPartSize: options.minPartSize,
          acceptsHost: hostAllowList({ boundHost: options.host, allowedHosts: options.allowedHosts }),
        })),
    ));
  const requests = new InFlight();
  const handle = (req: IncomingMessage, res: ServerResponse, expectContinue: boolean) =>
    requests.track(
      gateway
        ? gateway(req, res, expectContinue)
        : loadGateway().then(
            (loaded) => loaded(req, res, expectContinue),
            () => void res.destroy(),
          ),
    );
  /**
   * Waits for the requests under way and the file view updates they asked for: a closed
   * connection ends a request's reply, not the writes it began, and the data dir may be removed next.
   */
  const settle = async () => {
    await requests.settled();
    await fileView?.settled();
  };

  const server = http.createServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Node's own answer to a request it cannot parse (a status and nothing else), framed.
  closeConnectionsLingering(server, options.lingerMs ?? LINGER_MS, (code) => {
    const [status] = parserErrorReply(code);
    return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
  });
  server.on('request', (req, res) => handle(req, res, false));
  // Answer `Expect: 100-continue` requests ourselves, so refused uploads are refused before the
  // client sends the body (Node would otherwise send 100 Continue straight away).
  server.on('checkContinue', (req, res) => handle(req, res, true));
  // Any other expectation: S3 ignores an empty `Expect:` header, where Node would answer 417.
  server.on('checkExpectation', (req, res) => {
    if (req.headers.expect?.trim() === '') return handle(req, res, false);
    res.writeHead(417, { 'Content-Length': 0 }).end();
  });

  let url: string | null = null;
  let listening: Promise<string> | null = null;
  let closing: Promise<void> | null = null;
  const bind = async (): Promise<string> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Errors after startup (e.g. on accepted sockets) must not take the process down.
    server.on('error', () => {});
    const { port } = server.address() as AddressInfo;
    return (url = formatUrl(options.host, port));
  };

  return {
    get url() {
      return url;
    },
    listen() {
      if (closing) return Promise.reject(new Error('objstore: closed'));
      // A failed bind (a port in use) may be tried again.
      return (listening ??= bind().catch((error: unknown) => {
        listening = null;
        throw error;
      }));
    },
    filesDir: fileView?.directory ?? null,
    async reset() {
      directory.registry.clear();
      await storage.reset(buckets);
      await fileView?.reset();
    },
    buckets: () => directory.names().map((name) => ({ name, objects: storage.listBucketObjects(name) })),
    browser: createObjectBrowser({
      storage,
      directory,
      publicBuckets: new Set(options.publicBuckets),
      workspaceFolders: new Set(Object.keys(options.workspaceFolders ?? {})),
      fileView,
    }),
    headObject: async (bucket, key) =>
      directory.ownerOf(bucket) === undefined ? null : storage.headObject(bucket, key),
    pruneBuckets,
    contents: () => storage.readTree(),
    contentsProblem: (entries, createdBuckets) => storage.treeProblem(entries, [...buckets, ...createdBuckets]),
    stageContents(entries, createdBuckets) {
      const staged = storage.stageTree(entries, [...buckets, ...createdBuckets]);
      return {
        async install() {
          staged.install();
          await fileView?.replace(storage.objectsOf(entries));
        },
        discard: () => staged.discard(),
      };
    },
    close() {
      return (closing ??= (async () => {
        if (server.listening) {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeAllConnections();
          await closed;
        }
        await settle();
      })());
    },
  };
}

/** Starts the object storage listening on host:port at once. */
export async function startObjstore(options: ObjstoreOptions): Promise<Objstore> {
  const objstore = await createObjstore(options);
  let url: string;
  try {
    url = await objstore.listen();
  } catch (error) {
    await objstore.close();
    throw error;
  }
  return { url, filesDir: objstore.filesDir, reset: objstore.reset, close: objstore.close };
}
