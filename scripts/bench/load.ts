/**
 * The load of the throughput rows: wrk (Debian's package) when installed, autocannon otherwise,
 * each run as a child process whose output gives one sample; pinned, the servers run on one CPU
 * and the load generator on another.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onCpu } from './processes.ts';

const AUTOCANNON = fileURLToPath(new URL('../../node_modules/autocannon/autocannon.js', import.meta.url));

export const GENERATORS = ['wrk', 'autocannon'] as const;
export type Generator = (typeof GENERATORS)[number];

/** Where the throughput rows run when pinned: every server on `serverCpu`, the load generator on `loadCpu`. */
export interface Placement {
  serverCpu: number;
  loadCpu: number;
}

export interface LoadRequest {
  url: string;
  connections: number;
  seconds: number;
  headers: Record<string, string>;
}

/** Latencies in milliseconds. */
export interface LoadSample {
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

const WRK_LATENCY_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/**
 * wrk's `--latency` report; throws when it counted a socket error or an answer above 399 ("Non-2xx or 3xx responses").
 */
export function parseWrkOutput(output: string): LoadSample {
  const failures = [
    /^\s*Socket errors: .+$/m.exec(output)?.[0],
    /^\s*Non-2xx or 3xx responses: .+$/m.exec(output)?.[0],
  ].filter((line) => line !== undefined);
  if (failures.length > 0) {
    const total = /^\s*(\d+) requests in /m.exec(output)?.[1] ?? 'an unknown number of';
    throw new Error(`wrk: ${failures.map((line) => line.trim()).join('; ')} (of ${total} requests)`);
  }
  const latency = (percent: number) => {
    const match = new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(output);
    return match ? Number(match[1]) * WRK_LATENCY_UNITS_MS[match[2]!]! : NaN;
  };
  const sample = {
    requestsPerSecond: Number(/^Requests\/sec:\s+([\d.]+)$/m.exec(output)?.[1]),
    p50: latency(50),
    p99: latency(99),
  };
  if (Object.values(sample).some(Number.isNaN))
    throw new Error(`wrk: no Requests/sec or no 50% and 99% latencies (--latency) in its output:\n${output}`);
  return sample;
}

/** autocannon's `--json` result (its last line); throws when any answer was not 2xx or any connection failed. */
export function parseAutocannonJson(output: string): LoadSample {
  const result = JSON.parse(output.trim().split('\n').at(-1)!);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `autocannon: ${result.non2xx} answers not 2xx and ${result.errors} connection errors ` +
        `of ${result.requests.total} requests`,
    );
  }
  return { requestsPerSecond: result['2xx'] / result.duration, p50: result.latency.p50, p99: result.latency.p99 };
}

const COMMANDS: Record<Generator, { argv(request: LoadRequest): string[]; parse(output: string): LoadSample }> = {
  wrk: {
    // One thread: pinned, the generator has one CPU.
    argv: ({ url, connections, seconds, headers }) => [
      'wrk',
      '--threads',
      '1',
      '--connections',
      String(connections),
      '--duration',
      `${seconds}s`,
      '--latency',
      ...Object.entries(headers).flatMap(([name, value]) => ['--header', `${name}: ${value}`]),
      url,
    ],
    parse: parseWrkOutput,
  },
  autocannon: {
    argv: ({ url, connections, seconds, headers }) => [
      process.execPath,
      AUTOCANNON,
      '--json',
      '--connections',
      String(connections),
      '--pipelining',
      '1',
      '--duration',
      String(seconds),
      ...Object.entries(headers).flatMap(([name, value]) => ['--headers', `${name}=${value}`]),
      url,
    ],
    parse: parseAutocannonJson,
  },
};

/** One sample of load on `request.url`, the generator on `cpu` alone if given. */
export async function runLoad(generator: Generator, request: LoadRequest, cpu?: number): Promise<LoadSample> {
  const [command, ...args] = onCpu(cpu, COMMANDS[generator].argv(request));
  const { stdout } = await promisify(execFile)(command, args, { maxBuffer: 16 * 1024 * 1024 });
  try {
    return COMMANDS[generator].parse(stdout);
  } catch (error) {
    throw new Error(`${request.url}: ${(error as Error).message}`, { cause: error });
  }
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((directory) => {
    try {
      accessSync(join(directory, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The CPUs of a Linux CPU list such as `0-3,8`, in order. */
export function parseCpuList(list: string): number[] {
  return list
    .trim()
    .split(',')
    .flatMap((part) => {
      const range = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (!range) throw new Error(`not a CPU list: "${list}"`);
      const first = Number(range[1]);
      return Array.from({ length: Number(range[2] ?? first) - first + 1 }, (_, index) => first + index);
    });
}

/** The list of CPUs this process may run on (Linux), as /proc gives it; undefined where /proc is not there. */
export function allowedCpuList(): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
  } catch {
    return undefined;
  }
}

/** The CPUs this process may run on (Linux); none where /proc is not there. */
function allowedCpus(): number[] {
  const list = allowedCpuList();
  return list === undefined ? [] : parseCpuList(list);
}

/** The generator asked for, else wrk when installed, else autocannon. */
export function chooseGenerator(asked: string | undefined): Generator {
  if (asked === undefined) return onPath('wrk') ? 'wrk' : 'autocannon';
  if (!(GENERATORS as readonly string[]).includes(asked))
    throw new Error(`--generator takes ${GENERATORS.join(' or ')}, got "${asked}"`);
  if (asked === 'wrk' && !onPath('wrk'))
    throw new Error('--generator wrk: no wrk on the PATH (Debian: apt-get install wrk)');
  return asked as Generator;
}

/**
 * The first two CPUs this process may use when pinning is asked for (`true`), or by default
 * when taskset is installed and there are two; undefined (unpinned) otherwise.
 */
export function choosePlacement(asked: boolean | undefined): Placement | undefined {
  const [serverCpu, loadCpu] = allowedCpus();
  const canPin = onPath('taskset') && loadCpu !== undefined;
  if (asked === true && !canPin)
    throw new Error('--pinned needs taskset on the PATH and at least two CPUs this process may use');
  return (asked ?? canPin) && canPin ? { serverCpu: serverCpu!, loadCpu: loadCpu! } : undefined;
}

/** How the table names the load: its generator, connections and where it ran. */
export function describeLoad(generator: Generator, connections: number, placement: Placement | undefined): string {
  return placement
    ? `${connections} connections of ${generator} pinned to CPU ${placement.loadCpu}, the server to ` +
        `CPU ${placement.serverCpu}`
    : `${connections} connections of ${generator} sharing the CPUs with the server`;
}
