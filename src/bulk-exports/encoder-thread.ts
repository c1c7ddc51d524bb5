import { Worker } from 'node:worker_threads';
import type { Micros } from '../shared/time.ts';
import type { CompiledFilter } from '../tracing/filter.ts';
import type { RunCursor } from '../tracing/pages.ts';
import type { ParquetEncodeOptions } from './parquet.ts';

/** Where to read an export file's runs: projects in order, each after its cursor; the first with rows is read. */
export interface EncodeRequest {
  reads: { sessionId: string; after: RunCursor | null }[];
  from: Micros;
  to: Micros;
  limit: number;
  filter: CompiledFilter | null;
  parquet: ParquetEncodeOptions;
}

/** One encoded export file: its project, row count, last row's cursor and Parquet bytes. */
export interface EncodedFile {
  sessionId: string;
  rows: number;
  last: RunCursor;
  parquet: Uint8Array;
}

/** What the worker is sent: a file to encode from an instance's database, or to close that database's connection. */
export type EncoderMessage =
  { id: number; database: EncoderDatabase; request: EncodeRequest } | { id: number; close: true };

/**
 * What the worker answers to message `id`: the file (null when no rows are left, or the connection closed) or why it
 * failed.
 */
export type EncoderReply = { id: number; file: EncodedFile | null } | { id: number; error: string };

export interface EncoderDatabase {
  path: string;
  templatePath: string;
}

interface PendingEncode {
  resolve: (file: EncodedFile | null) => void;
  reject: (error: Error) => void;
}

/**
 * The worker's garbage is mostly outside its heap (each page's column buffers, megabytes that
 * SQLite hands over), freed when a scavenge finds their small handles dead. With V8's default
 * young generation (tens of MB) the worker, which makes few JS objects, scavenged so seldom
 * that buffers of ten pages were held at once; a small one frees them within a page or two.
 */
const WORKER_YOUNG_GENERATION_MB = 2;

/** Idle workers kept for the next instance of this process, by module. */
const MAX_IDLE_WORKERS = 2;
/** How long an idle worker waits for an instance before it ends. */
const IDLE_WORKER_MS = 60_000;
/** Each module's idle workers, with what taking one undoes (its end timer, its idle listeners). */
const idleWorkers = new Map<string, Map<Worker, () => void>>();

/**
 * Keeps a worker that closed its instance's connection for the next instance of this process:
 * loading the worker's modules (Arrow, Parquet's WebAssembly, SQLite) costs more CPU than most
 * exports, and a test suite starts an instance per file. It ends after IDLE_WORKER_MS unused.
 */
function keepIdle(module: URL, worker: Worker): void {
  const idle = idleWorkers.get(module.href) ?? new Map<Worker, () => void>();
  if (idle.size >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  idleWorkers.set(module.href, idle);
  worker.unref();
  const forget = () => idle.delete(worker);
  const ending = setTimeout(() => forget() && void worker.terminate(), IDLE_WORKER_MS).unref();
  // An idle worker that fails ends, and reaches no instance.
  const ignore = () => {};
  worker.once('exit', forget);
  worker.on('error', ignore);
  idle.set(worker, () => {
    clearTimeout(ending);
    worker.off('exit', forget);
    worker.off('error', ignore);
  });
}

function takeIdle(module: URL): Worker | null {
  const idle = idleWorkers.get(module.href);
  const [taken] = idle ?? [];
  if (taken === undefined) return null;
  const [worker, adopt] = taken;
  idle!.delete(worker);
  adopt();
  return worker;
}

/**
 * The thread that reads and encodes export files (export-worker.ts) off the API thread, with
 * its own read-only connection to the instance database. Started at the first export (or an
 * idle one of a stopped instance taken, see keepIdle); a worker that dies fails the requests it
 * held and is started again by the next one.
 */
export class EncoderThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, PendingEncode>();
  private nextId = 1;
  private closed = false;
  private detach: (() => void) | null = null;

  constructor(
    private readonly database: EncoderDatabase,
    private readonly workerModule: URL = defaultWorkerModule(),
  ) {}

  /** The run's next file, null when it has no rows left. */
  encode(request: EncodeRequest): Promise<EncodedFile | null> {
    if (this.closed) return Promise.reject(new Error('The export encoder is closed'));
    return this.send({ id: this.nextId++, database: this.database, request });
  }

  /**
   * Stops using the worker; requests still waiting fail. An idle worker closes the instance's
   * connection and is kept for the next instance; a busy one is stopped.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (worker !== null && this.waiting.size === 0) {
      const connectionClosed = await this.send({ id: this.nextId++, close: true }).then(
        () => true,
        () => false,
      );
      if (connectionClosed && this.worker === worker) {
        this.release();
        keepIdle(this.workerModule, worker);
        return;
      }
    }
    this.worker = null;
    await worker?.terminate();
  }

  private send(message: EncoderMessage): Promise<EncodedFile | null> {
    const worker = (this.worker ??= this.adopt(takeIdle(this.workerModule) ?? this.startWorker()));
    return new Promise((resolve, reject) => {
      this.waiting.set(message.id, { resolve, reject });
      worker.ref();
      worker.postMessage(message);
    });
  }

  private startWorker(): Worker {
    const module = this.workerModule.pathname.endsWith('.ts') ? sourceLoader(this.workerModule) : this.workerModule;
    return new Worker(module, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  }

  /** Listens to the worker for this encoder, until release(). */
  private adopt(worker: Worker): Worker {
    let failure = '';
    const onMessage = (reply: EncoderReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.file);
    };
    const onError = (error: Error) => (failure = `: ${error.message}`);
    const onExit = (code: number) => {
      if (this.worker === worker) this.release();
      const error = new Error(
        this.closed
          ? 'The export encoder was closed'
          : `The export encoder stopped unexpectedly (exit code ${code})${failure}`,
      );
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    this.detach = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    return worker;
  }

  private release(): void {
    this.detach?.();
    this.detach = null;
    this.worker = null;
  }
}

/**
 * From dist/, the worker bundled with its JavaScript packages (scripts/bundle-cli.ts); from the sources,
 * export-worker.ts.
 */
function defaultWorkerModule(): URL {
  const here = new URL(import.meta.url);
  return new URL(here.pathname.endsWith('.ts') ? './export-worker.ts' : './export-worker.bundle.cjs', here);
}

/**
 * Run from sources (tsx, vitest) the worker is TypeScript: a small module loads it through tsx.
 * Its specifiers are resolved here, as a data: module resolves no package names.
 */
function sourceLoader(module: URL): URL {
  const tsx = import.meta.resolve('tsx/esm/api');
  const code =
    `import { tsImport } from ${JSON.stringify(tsx)}; await ` +
    `tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
