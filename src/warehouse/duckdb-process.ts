/**
 * The instance's DuckDB, in a process of its own (duckdb-child.ts) started by the first query or
 * preview. The process holds what DuckDB alone does not: an address-space limit (on Linux; DuckDB
 * counts only part of what it allocates against its own limit), and a kill when a query outlasts
 * its time limit (DuckDB checks for an interrupt only between steps; one long step, such as
 * building a 2 GB string, runs on). Whatever the process held goes with it, and the next query
 * starts another.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import type { DuckDBChildSettings, DuckDBReply, DuckDBRequest, DuckDBWork } from './duckdb-child.ts';
import { QueryError, QueryStopped } from './errors.ts';
import type { BoundedResult, ParquetPreview } from './sandbox.ts';

/** Past its time limit, a query has this long to answer DuckDB's interrupt before its process is killed. */
const KILL_GRACE_MS = 500;
/**
 * Address space the process may map beyond DuckDB's memory limit. Node and DuckDB (at most four
 * threads, malloc's arenas held to two) map 0.85-1.3 GB before any query; what is left above the
 * limit is 200-650 MB, so that an allocation DuckDB does not count against its limit (a 2 GB
 * string) fails at once as out of memory.
 */
const ADDRESS_SPACE_HEADROOM_MB = 1_500;
const MAX_THREADS = 4;
const STDERR_KEPT = 2_000;

export interface QueryBounds {
  timeLimitMs: number;
  memoryLimitMb: number;
}

interface PendingQuery {
  resolve: (result: BoundedResult | ParquetPreview) => void;
  reject: (error: QueryError) => void;
  deadline: NodeJS.Timeout;
}

/** From dist/, the compiled child; from the sources (tsx, vitest), the child bundled first (sourceChild). */
const childModule = (): Promise<string> => {
  const here = new URL(import.meta.url);
  return here.pathname.endsWith('.ts')
    ? (sourceChildModule ??= sourceChild(new URL('./duckdb-child.ts', here)))
    : Promise.resolve(fileURLToPath(new URL('./duckdb-child.js', here)));
};
let sourceChildModule: Promise<string> | undefined;

/**
 * The child's TypeScript bundled into one module in the temp folder, its packages imported from
 * where they are: loaded through tsx it would map WebAssembly memory (tsx's lexer) that the
 * address-space limit leaves no room for. Named after its content, so that instances share it.
 */
async function sourceChild(entry: URL): Promise<string> {
  const { build } = await import('esbuild');
  const packagesWhereTheyAre: Plugin = {
    name: 'packages-where-they-are',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^[^./]/ }, ({ path }) => ({
        path: path.startsWith('node:') ? path : import.meta.resolve(path),
        external: true,
      }));
    },
  };
  const { outputFiles } = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    plugins: [packagesWhereTheyAre],
  });
  const code = outputFiles[0]!.contents;
  const file = join(
    tmpdir(),
    `localplane-duckdb-child-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`,
  );
  if (!existsSync(file)) {
    const written = `${file}.${process.pid}`;
    await writeFile(written, code);
    await rename(written, file);
  }
  return file;
}

async function spawnChild(settings: DuckDBChildSettings): Promise<ChildProcess> {
  const args = [await childModule(), JSON.stringify(settings)];
  const options = {
    // Two malloc arenas, not eight per core: each reserves 64 MB of address space.
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'] as ('ignore' | 'pipe' | 'ipc')[],
  };
  if (process.platform !== 'linux') return spawn(process.execPath, args, options);
  const addressSpaceKib = Math.ceil(((settings.memoryLimitMb + ADDRESS_SPACE_HEADROOM_MB) * 1_000_000) / 1024);
  // Where the hard limit is lower already, that one holds.
  return spawn(
    '/bin/sh',
    ['-c', 'ulimit -v "$0" 2>/dev/null; exec "$@"', String(addressSpaceKib), process.execPath, ...args],
    options,
  );
}

/** One DuckDB process and the requests it has not answered yet. */
class DuckDBChild {
  private readonly waiting = new Map<number, PendingQuery>();
  private nextId = 0;
  /** Why the process ended or is ending: what it has not answered, and whatever it is sent next, gets this. */
  private stopped: QueryError | null = null;
  private stderr = '';
  private outOfMemory: string | null = null;
  private retired = false;
  readonly exited: Promise<void>;
  private readonly opened: Promise<void>;
  private onOpened!: () => void;
  /** Requests that wait for DuckDB to open. */
  private beforeOpened = 0;

  constructor(
    readonly settings: DuckDBChildSettings,
    private readonly process: ChildProcess,
  ) {
    this.process.stderr!.setEncoding('utf8').on('data', (text: string) => {
      const seen = this.stderr + text;
      // Node's report of a heap it could not grow, or C++'s of an allocation, comes before a long stack trace.
      this.outOfMemory ??= /^.*(out of memory|bad_alloc).*$/im.exec(seen)?.[0].trim() ?? null;
      this.stderr = seen.slice(-STDERR_KEPT);
    });
    this.process.on('message', (reply: DuckDBReply) => this.onReply(reply));
    // A failed spawn ends as an exit too, with its code.
    this.process.on('error', () => {});
    this.opened = new Promise((resolve) => (this.onOpened = resolve));
    // 'close' comes after the last of stderr, and after a failed spawn too.
    this.exited = new Promise((resolve) =>
      this.process.once('close', (code, signal) => resolve(this.onExit(code, signal))),
    );
    this.idle();
  }

  get busy(): boolean {
    return this.waiting.size > 0 || this.beforeOpened > 0;
  }

  /** The time limit counts from when DuckDB has opened: starting its process is not the query's time. */
  async run(work: DuckDBWork, timeLimitMs: number): Promise<BoundedResult | ParquetPreview> {
    this.beforeOpened++;
    this.process.ref();
    this.process.channel?.ref();
    await this.opened;
    this.beforeOpened--;
    if (this.stopped) {
      if (!this.busy) this.idle();
      throw this.stopped;
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => this.stop(new QueryStopped('time limit')), timeLimitMs + KILL_GRACE_MS);
      this.waiting.set(id, { resolve, reject, deadline });
      this.process.send({ id, work } satisfies DuckDBRequest);
    });
  }

  /** Kills the process: what it has not answered gets `reason`. */
  stop(reason: QueryError): void {
    this.stopped ??= reason;
    this.process.kill('SIGKILL');
  }

  /** Ends the process once it has answered what it was sent (at once when idle). */
  retire(): void {
    this.retired = true;
    if (!this.busy) this.stop(new QueryStopped('closing'));
  }

  private onReply(reply: DuckDBReply): void {
    if ('ready' in reply) return this.onOpened();
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.settle(reply.id, waiting);
    if ('result' in reply) waiting.resolve(reply.result);
    else waiting.reject(reply.stopped ? new QueryStopped(reply.stopped, reply.detail) : new QueryError(reply.error));
    if (this.retired && !this.busy) this.retire();
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const error = (this.stopped ??= this.whyItEnded(code, signal));
    this.onOpened();
    for (const [id, waiting] of this.waiting) {
      this.settle(id, waiting);
      waiting.reject(error);
    }
  }

  /** Node aborts when the address-space limit leaves its heap no room: that is the memory limit too. */
  private whyItEnded(code: number | null, signal: NodeJS.Signals | null): QueryError {
    if (this.outOfMemory)
      return new QueryStopped('memory limit', `DuckDB's process ran out of memory (${this.outOfMemory})`);
    const lastLine = this.stderr.trim().split('\n').at(-1);
    return new QueryError(
      `DuckDB's process ended unexpectedly (${signal ?? `exit code ${code}`})${lastLine ? `: ${lastLine}` : ''}; ` +
        `the next query starts it again`,
    );
  }

  private settle(id: number, waiting: PendingQuery): void {
    clearTimeout(waiting.deadline);
    this.waiting.delete(id);
    if (!this.busy) this.idle();
  }

  /** An idle process keeps no one's event loop alive. */
  private idle(): void {
    this.process.unref();
    this.process.channel?.unref();
  }
}

/** A process being started, or started, for one memory limit. */
interface Started {
  memoryLimitMb: number;
  child: Promise<DuckDBChild>;
}

/**
 * The instance's DuckDB over one folder: a process started on first use, again after one ends, and anew when the memory
 * limit changes.
 */
export class DuckDBProcess {
  private current: Started | null = null;
  private readonly children = new Set<DuckDBChild>();
  private closed = false;

  constructor(private readonly folder: string) {}

  query(sql: string, options: { setup?: string; rowLimit: number } & QueryBounds): Promise<BoundedResult> {
    const { setup, rowLimit, timeLimitMs } = options;
    return this.run({ kind: 'query', sql, setup, rowLimit, timeLimitMs }, options) as Promise<BoundedResult>;
  }

  previewParquet(file: string, rows: number, bounds: QueryBounds): Promise<ParquetPreview> {
    return this.run(
      { kind: 'preview', file, rows, timeLimitMs: bounds.timeLimitMs },
      bounds,
    ) as Promise<ParquetPreview>;
  }

  /** Kills the processes: what they have not answered is stopped ('closing'). */
  async close(): Promise<void> {
    this.closed = true;
    await this.current?.child.catch(() => null);
    for (const child of this.children) child.stop(new QueryStopped('closing'));
    await Promise.all([...this.children].map((child) => child.exited));
  }

  private async run(work: DuckDBWork, bounds: QueryBounds): Promise<BoundedResult | ParquetPreview> {
    if (this.closed) throw new QueryStopped('closing');
    return (await this.childFor(bounds.memoryLimitMb)).run(work, bounds.timeLimitMs);
  }

  private childFor(memoryLimitMb: number): Promise<DuckDBChild> {
    if (this.current?.memoryLimitMb === memoryLimitMb) return this.current.child;
    void this.current?.child.then(
      (child) => child.retire(),
      () => {},
    );
    const settings = { folder: this.folder, memoryLimitMb, threads: Math.min(availableParallelism(), MAX_THREADS) };
    const current: Started = {
      memoryLimitMb,
      child: spawnChild(settings).then(
        (process) => this.adopt(new DuckDBChild(settings, process), current),
        (error: unknown) => {
          // Tried again by the next query.
          if (this.current === current) this.current = null;
          throw new QueryError(`DuckDB's process could not start: ${(error as Error).message}`);
        },
      ),
    };
    this.current = current;
    return current.child;
  }

  private adopt(child: DuckDBChild, current: Started): DuckDBChild {
    this.children.add(child);
    void child.exited.then(() => {
      this.children.delete(child);
      if (this.current === current) this.current = null;
    });
    if (this.closed) child.stop(new QueryStopped('closing'));
    return child;
  }
}
