import { Worker, type Transferable } from 'node:worker_threads';
import type { Micros } from '../shared/time.ts';
import type { CompiledFilter } from '../tracing/filter.ts';
import type { RunCursor } from '../tracing/store.ts';
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

/** A file's runs read and encoded as an Arrow IPC stream, by the reader worker. */
export interface ArrowFile {
  sessionId: string;
  rows: number;
  last: RunCursor;
  ipc: Uint8Array;
}

/** One encoded export file: its project, row count, last row's cursor and Parquet bytes. */
export interface EncodedFile {
  sessionId: string;
  rows: number;
  last: RunCursor;
  parquet: Uint8Array;
}

/** What the Parquet writer worker is asked: an IPC stream from the reader and the file's options. */
export interface WriteRequest {
  ipc: Uint8Array;
  parquet: ParquetEncodeOptions;
}

/** What a worker answers to request `id`: its result or why it failed. */
export type WorkerReply<T> = { id: number; result: T } | { id: number; error: string };

export interface EncoderDatabase {
  path: string;
  templatePath: string;
}

export interface EncoderModules {
  reader: URL;
  writer: URL;
}

/**
 * Reads and encodes export files off the API thread, in two worker threads working as a
 * pipeline: the reader (export-reader-worker.ts: its own read-only connection to the instance
 * database, rows to Arrow) and the writer (parquet-writer-worker.ts: Arrow to Parquet), so
 * that one file is read while the one before is written. Started at the first export; a
 * worker that dies fails the requests it held and is started again by the next one.
 */
export class EncoderThread {
  private readonly reader: WorkerChannel<EncodeRequest, ArrowFile | null>;
  private readonly writer: WorkerChannel<WriteRequest, Uint8Array>;

  constructor(database: EncoderDatabase, modules: EncoderModules = { reader: sibling('export-reader-worker'), writer: sibling('parquet-writer-worker') }) {
    this.reader = new WorkerChannel(modules.reader, database);
    this.writer = new WorkerChannel(modules.writer, null);
  }

  /** The run's next file, null when it has no rows left. */
  async encode(request: EncodeRequest): Promise<EncodedFile | null> {
    const arrow = await this.reader.request(request);
    if (!arrow) return null;
    const { ipc, ...file } = arrow;
    return { ...file, parquet: await this.writer.request({ ipc, parquet: request.parquet }, [ipc.buffer as ArrayBuffer]) };
  }

  /** Stops the workers; requests still waiting fail. */
  async close(): Promise<void> {
    await Promise.all([this.reader.close(), this.writer.close()]);
  }
}

interface Waiting<T> {
  resolve: (result: T) => void;
  reject: (error: Error) => void;
}

/** Requests to one worker thread, answered in any order by id; the worker starts with the first. */
class WorkerChannel<Request, Result> {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting<Result>>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly module: URL,
    private readonly workerData: unknown,
  ) {}

  request(request: Request, transfer: Transferable[] = []): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('The export encoder is closed'));
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, request }, transfer);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private start(): Worker {
    const options = { workerData: this.workerData };
    const worker = this.module.pathname.endsWith('.ts') ? new Worker(sourceLoader(this.module), options) : new Worker(this.module, options);
    let failure = '';
    worker.on('message', (reply: WorkerReply<Result>) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      // An idle worker does not keep the process alive.
      if (this.waiting.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.result);
    });
    worker.on('error', (error) => (failure = `: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      const error = new Error(this.closed ? 'The export encoder was closed' : `The export encoder stopped unexpectedly (exit code ${code})${failure}`);
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    });
    return worker;
  }
}

/** A worker module beside this one: `.ts` from the sources, `.js` from dist. */
function sibling(name: string): URL {
  const here = new URL(import.meta.url);
  return new URL(`./${name}${here.pathname.slice(here.pathname.lastIndexOf('.'))}`, here);
}

/**
 * Run from sources (tsx, vitest) a worker is TypeScript: a small module loads it through tsx.
 * Its specifiers are resolved here, as a data: module resolves no package names.
 */
function sourceLoader(module: URL): URL {
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import { tsImport } from ${JSON.stringify(tsx)}; await tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
