/**
 * npm run bench:api [-- --seconds 10 --connections 32 --depth 8 --path /v2/deployments]
 *
 * Spawns the compiled CLI with the shipped fixtures (template cached) and prints:
 * the time from spawn to the ready line, the time of POST /_localplane/reset, and the
 * throughput of an authenticated GET (default /v2/deployments) from a second process over
 * keep-alive connections with pipelined requests, with its latency percentiles.
 */
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { prepareFixtures } from '../src/localplane.ts';
import { spawnLocalplane } from './spawn-localplane.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    depth: { type: 'string', default: '8' },
    path: { type: 'string', default: '/v2/deployments' },
    resets: { type: 'string', default: '200' },
  },
});
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const ms = (value: number) => value.toFixed(2);
const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];

async function measureResets(apiUrl: string, count: number): Promise<number[]> {
  const timings: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = performance.now();
    const response = await fetch(`${apiUrl}/_localplane/reset`, { method: 'POST' });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`reset answered ${response.status}`);
    timings.push(performance.now() - before);
  }
  return timings.sort((a, b) => a - b);
}

/**
 * A minimal HTTP/1.1 load client: each connection keeps `depth` requests in flight
 * (pipelined) and counts responses by their Content-Length, so the client spends little
 * of the machine's CPU next to the server.
 */
function load(apiUrl: string, request: string, options: { connections: number; depth: number; seconds: number }) {
  const { hostname, port } = new URL(apiUrl);
  const latencies: number[] = [];
  let completed = 0;
  let failed = 0;
  let running = true;
  const sockets: Socket[] = [];
  const requestBytes = Buffer.from(request);

  const openConnection = () =>
    new Promise<void>((connected) => {
      const socket = connect({ host: hostname, port: Number(port) }, connected);
      socket.setNoDelay(true);
      sockets.push(socket);
      const sentAt: number[] = [];
      let buffer: Buffer = Buffer.alloc(0);
      const send = () => {
        sentAt.push(performance.now());
        socket.write(requestBytes);
      };
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          const headerEnd = buffer.indexOf('\r\n\r\n');
          if (headerEnd === -1) break;
          const head = buffer.subarray(0, headerEnd).toString('latin1');
          const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < headerEnd + 4 + length) break;
          buffer = buffer.subarray(headerEnd + 4 + length);
          latencies.push(performance.now() - sentAt.shift()!);
          if (head.startsWith('HTTP/1.1 200')) completed++;
          else failed++;
          if (running) send();
        }
      });
      socket.on('connect', () => {
        for (let i = 0; i < options.depth; i++) send();
      });
    });

  return (async () => {
    await Promise.all(Array.from({ length: options.connections }, openConnection));
    const startedAt = performance.now();
    await new Promise((done) => setTimeout(done, options.seconds * 1000));
    running = false;
    const elapsed = (performance.now() - startedAt) / 1000;
    for (const socket of sockets) socket.destroy();
    return { completed, failed, elapsed, latencies: latencies.sort((a, b) => a - b) };
  })();
}

async function main() {
  const templateStartedAt = performance.now();
  prepareFixtures();
  console.log(`fixture template ready (built or cached) in ${ms(performance.now() - templateStartedAt)} ms`);

  const readyTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const instance = await spawnLocalplane(nodeFlags);
    readyTimes.push(instance.readyMs);
    await instance.stop();
  }
  console.log(`ready line after spawn: ${readyTimes.map(ms).join(', ')} ms`);

  const instance = await spawnLocalplane(nodeFlags);
  try {
    const fixtures = (await (await fetch(`${instance.apiUrl}/_localplane/fixtures`)).json()) as { workspaces: { id: string; api_key: string; tier: string }[] };
    const workspace = fixtures.workspaces.find((candidate) => candidate.tier === 'plus')!;

    const resets = await measureResets(instance.apiUrl, Number(values.resets));
    console.log(`POST /_localplane/reset x${resets.length}: median ${ms(percentile(resets, 50))} ms, p99 ${ms(percentile(resets, 99))} ms, max ${ms(resets.at(-1)!)} ms`);

    const { host } = new URL(instance.apiUrl);
    const request = `GET ${values.path} HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${workspace.api_key}\r\nX-Tenant-Id: ${workspace.id}\r\n\r\n`;
    const options = { connections: Number(values.connections), depth: Number(values.depth), seconds: Number(values.seconds) };
    await load(instance.apiUrl, request, { ...options, seconds: 2 }); // warm-up
    const result = await load(instance.apiUrl, request, options);
    console.log(
      `GET ${values.path}: ${Math.round(result.completed / result.elapsed)} requests/s over ${options.connections} connections x ${options.depth} in flight ` +
        `(${result.completed} ok, ${result.failed} not 200 in ${result.elapsed.toFixed(1)} s); ` +
        `latency median ${ms(percentile(result.latencies, 50))} ms, p99 ${ms(percentile(result.latencies, 99))} ms`,
    );
  } finally {
    await instance.stop();
  }
}

await main();
