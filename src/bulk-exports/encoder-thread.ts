import { Worker } from 'node:worker_threads';
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

/** One encoded export file: its project, row count, last row's cursor and Parquet bytes. */
export interface EncodedFile {
  sessionId: string;
  rows: number;
  last: RunCursor;
  parquet: Uint8Array;
}

/** What the worker answers to request `id`: the file (null when no rows are left) or why it failed. */
export type EncoderReply = { id: number; file: EncodedFile | null } | { id: number; error: string };

export interface EncoderDatabase {
  path: string;
  templatePath: string;
}

interface Waiting {
  resolve: (file: EncodedFile | null) => void;
  reject: (error: Error) => void;
}

/**
 * The thread that reads and encodes export files (export-worker.ts) off the API thread, with
 * its own read-only connection to the instance database. Started at the first export; a
 * worker that dies fails the requests it held and is started again by the next one.
 */
export class EncoderThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly database: EncoderDatabase,
    private readonly workerModule: URL = defaultWorkerModule(),
  ) {}

  /** The run's next file, null when it has no rows left. */
  encode(request: EncodeRequest): Promise<EncodedFile | null> {
    if (this.closed) return Promise.reject(new Error('The export encoder is closed'));
    const worker = (this.worker ??= this.startWorker());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, request });
    });
  }

  /** Stops the worker; requests still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private startWorker(): Worker {
    const worker = this.workerModule.pathname.endsWith('.ts')
      ? new Worker(sourceLoader(this.workerModule), { workerData: this.database })
      : new Worker(this.workerModule, { workerData: this.database });
    let failure = '';
    worker.on('message', (reply: EncoderReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.file);
    });
    worker.on('error', (error) => (failure = `: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      const error = new Error(
        this.closed ? 'The export encoder was closed' : `The export encoder stopped unexpectedly (exit code ${code})${failure}`,
      );
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    });
    return worker;
  }
}

function defaultWorkerModule(): URL {
  const here = new URL(import.meta.url);
  return new URL(`./export-worker${here.pathname.slice(here.pathname.lastIndexOf('.'))}`, here);
}

/**
 * Run from sources (tsx, vitest) the worker is TypeScript: a small module loads it through tsx.
 * Its specifiers are resolved here, as a data: module resolves no package names.
 */
function sourceLoader(module: URL): URL {
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import { tsImport } from ${JSON.stringify(tsx)}; await tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
