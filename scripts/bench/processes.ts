import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/localplane.js', import.meta.url));
const PRISM = fileURLToPath(new URL('../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));
const CEILING = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url));
/** The real service's OpenAPI document, beside the repository where the project keeps it (not in every checkout). */
const REFERENCE_OPENAPI = fileURLToPath(new URL('../../../shared/spec/reference-openapi.json', import.meta.url));

export interface SpawnedServer {
  pid: number;
  /** `http://host:port` of its API. */
  apiUrl: string;
  /** localplane's objstore, `http://host:port`. */
  objstoreUrl?: string;
  /** performance.now() at the spawn. */
  spawnedAt: number;
  /** SIGTERM, resolved once it has exited. */
  stop(): Promise<void>;
}

/** Every child still running, so that a failed or interrupted bench leaves none behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

function stopper(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
}

/** `argv` run by taskset on `cpu` alone (its threads and children too), or as it is when `cpu` is undefined. */
export function onCpu(cpu: number | undefined, argv: readonly string[]): [string, ...string[]] {
  if (cpu === undefined) return [argv[0]!, ...argv.slice(1)];
  return ['taskset', '--cpu-list', String(cpu), ...argv];
}

/**
 * Spawns `node args...` (on `cpu` alone if given) and resolves once its stdout matches `ready` (its groups: the API's
 * URL, then any objstore's).
 */
function spawnUntilReady(
  args: readonly string[],
  ready: RegExp,
  timeoutMs: number,
  cpu?: number,
): Promise<SpawnedServer> {
  const spawnedAt = performance.now();
  const [command, ...commandArgs] = onCpu(cpu, [process.execPath, ...args]);
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stop = stopper(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${args.join(' ')}: no ready line within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({ pid: child.pid!, apiUrl: match[1]!, objstoreUrl: match[2], spawnedAt, stop });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`));
    });
  });
}

/**
 * Spawns the compiled `localplane start` on 127.0.0.1 and free ports, without its request log
 * (extra CLI flags in `flags`, e.g. `--fixtures <dir>`), on `cpu` alone if given; resolves once
 * it prints its ready line. `bin` is another checkout's bin/localplane.js, to measure it beside this one.
 */
export function spawnLocalplane({
  flags = [],
  timeoutMs = 120_000,
  cpu,
  bin = BIN,
}: { flags?: readonly string[]; timeoutMs?: number; cpu?: number; bin?: string } = {}): Promise<SpawnedServer> {
  return spawnUntilReady(
    [bin, 'start', '--host', '127.0.0.1', '--port', '0', '--objstore-port', '0', '--quiet', ...flags],
    /localplane ready api=(\S+) objstore=(\S+)/,
    timeoutMs,
    cpu,
  );
}

/** A port free at the moment of asking, for servers that cannot tell which one they took. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `prism mock` of an OpenAPI document without its request log, on `cpu` alone if given.
 * It prints no usable ready line when quiet, so the caller waits for its first answer (see firstOk).
 */
export async function spawnPrism(
  document: string,
  cpu?: number,
): Promise<{ apiUrl: string; spawnedAt: number; stop(): Promise<void> }> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const [command, ...args] = onCpu(cpu, [
    process.execPath,
    PRISM,
    'mock',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--verboseLevel',
    'error',
    document,
  ]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return { apiUrl: `http://127.0.0.1:${port}`, spawnedAt, stop: stopper(child) };
}

/** The document Prism mocks, and how the table names that peer. */
export interface PrismDocument {
  file: string;
  peer: string;
}

/** The given document, else the reference OpenAPI, else localplane's own GET /openapi.json written to `scratchDir`. */
export async function prismDocument(given: string | undefined, scratchDir: string): Promise<PrismDocument> {
  if (given) return { file: given, peer: `prism mock of ${given}` };
  if (existsSync(REFERENCE_OPENAPI)) return { file: REFERENCE_OPENAPI, peer: 'prism mock of the reference OpenAPI' };
  const localplane = await spawnLocalplane();
  try {
    const file = join(scratchDir, 'localplane-openapi.json');
    writeFileSync(file, await (await fetch(`${localplane.apiUrl}/openapi.json`)).text());
    return { file, peer: "prism mock of localplane's own /openapi.json (no reference OpenAPI here)" };
  } finally {
    await localplane.stop();
  }
}

/** One canned answer of the ceiling server. */
export interface CannedResponse {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Spawns the bare Hono server (ceiling-server.ts) answering each path with its canned bytes, on `cpu` alone if given.
 */
export function spawnCeiling(responsesFile: string, cpu?: number): Promise<SpawnedServer> {
  return spawnUntilReady(['--import', 'tsx', CEILING, responsesFile], /ceiling ready (\S+)/, 30_000, cpu);
}

/**
 * Polls `url` until it answers 200, at most every 5 ms while the port refuses connections;
 * resolves with the time of that answer.
 */
export async function firstOk(url: string, headers: Record<string, string>, timeoutMs = 60_000): Promise<number> {
  const giveUpAt = performance.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.ok) return performance.now();
    } catch {
      // not listening yet
    }
    if (performance.now() > giveUpAt) throw new Error(`${url}: no 200 within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Peak resident set of a process so far (VmHWM), in bytes; NaN where /proc is not there. */
export function peakRssBytes(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
  } catch {
    return NaN;
  }
}
