/**
 * npm run soak [-- --seconds 60 --connections 50 --sample-seconds 5 --max-requests 2000000]
 *
 * Spawns the compiled CLI on 127.0.0.1 and keeps `connections` keep-alive connections busy with
 * a mix of reads and writes (deployments created and deleted, destinations validated against
 * the objstore and deleted, exports and their runs read) for `seconds`, while exports of a day
 * of the 50,000-run project run one after another. Stops by itself at the time or request
 * limit, then prints the requests by kind, every unexpected answer (none expected), latency
 * percentiles and the server's RSS sampled every `sample-seconds`; exits 1 on any error.
 */
import type { FixturesView } from '../src/admin/schemas.ts';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { isTerminalStatus } from '../src/bulk-exports/statuses.ts';
import { OBJSTORE_PERMISSIONS } from '../src/objstore/index.ts';
import { createRandom } from '../src/shared/prng.ts';
import { spawnLocalplane } from './bench/processes.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '50' },
    'sample-seconds': { type: 'string', default: '5' },
    'max-requests': { type: 'string', default: '2000000' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const sampleSeconds = Number(values['sample-seconds']);
const maxRequests = Number(values['max-requests']);

const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

function request(
  apiUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${apiUrl}${path}`,
      { method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : text,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The server's resident set, from /proc (Linux) or ps. */
function rssMb(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

async function main() {
  const server = await spawnLocalplane();
  const { apiUrl, pid } = server;
  const fixtures = (await request(apiUrl, 'GET', '/_localplane/fixtures', {})).body as FixturesView;
  const workspace = fixtures.workspaces.find((candidate) => candidate.tier === 'plus')!;
  const auth = { 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id };
  const key = fixtures.objstore.keys.find((candidate) =>
    OBJSTORE_PERMISSIONS.every((permission) => candidate.permissions.includes(permission)),
  )!;
  const destinationBody = (name: string) => ({
    display_name: name,
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: `soak/${name}` },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  const bigSession = workspace.sessions.find((session) => session.run_count >= 50_000)!;
  const integration = workspace.integrations[0]!;
  const seeded = workspace.deployments.map((deployment) => deployment.id);

  const latenciesByKind = new Map<string, number[]>();
  const errors: string[] = [];
  const latencies: number[] = [];
  let requests = 0;
  const deadline = performance.now() + seconds * 1000;
  const going = () => performance.now() < deadline && requests < maxRequests;

  /**
   * One request of a kind, expecting one status; anything else is an error. The answer's body is returned as the shape
   * `T` the caller expects (not checked), undefined when the request failed.
   */
  const call = async <T>(
    kind: string,
    expected: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T | undefined> => {
    requests++;
    const began = performance.now();
    try {
      const response = await request(apiUrl, method, path, auth, body);
      const latency = performance.now() - began;
      latencies.push(latency);
      latenciesByKind.set(kind, [...(latenciesByKind.get(kind) ?? []), latency]);
      if (response.status !== expected)
        errors.push(`${kind}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
      return response.body as T;
    } catch (error) {
      errors.push(`${kind}: ${(error as Error).message}`);
      return undefined;
    }
  };

  // Exports of one day of the big project, one after another, for the whole run.
  const exportsDestination = (await call<{ id: string }>(
    'create destination',
    200,
    'POST',
    '/api/v1/bulk-exports/destinations',
    destinationBody('exports'),
  ))!;
  let currentExport = '';
  let exportsDone = 0;
  const exporting = (async () => {
    while (going()) {
      const created = await call<{ id: string; status: string }>('create export', 200, 'POST', '/api/v1/bulk-exports', {
        bulk_export_destination_id: exportsDestination.id,
        session_id: bigSession.id,
        start_time: '2026-10-02T00:00:00Z',
        end_time: '2026-10-03T00:00:00Z',
      });
      if (!created) return;
      currentExport = created.id;
      for (let status: string | undefined = created.status; going() && !isTerminalStatus(String(status));) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = (await call<{ status: string }>('poll export', 200, 'GET', `/api/v1/bulk-exports/${created.id}`))
          ?.status;
        if (status === 'Completed') exportsDone++;
        else if (status && status !== 'Running' && status !== 'Created')
          errors.push(`export ${created.id} ended ${status}`);
      }
    }
  })();

  const connection = async (index: number) => {
    const random = createRandom(index + 1);
    for (let n = 0; going(); n++) {
      const dice = random();
      if (dice < 0.3) await call('list deployments', 200, 'GET', '/v2/deployments?limit=20');
      else if (dice < 0.45)
        await call('get deployment', 200, 'GET', `/v2/deployments/${seeded[Math.floor(random() * seeded.length)]}`);
      else if (dice < 0.55) await call('list exports', 200, 'GET', '/api/v1/bulk-exports?limit=10');
      else if (dice < 0.62 && currentExport)
        await call('get export runs', 200, 'GET', `/api/v1/bulk-exports/${currentExport}/runs`);
      else if (dice < 0.85) {
        const created = await call<{ id: string }>('create deployment', 201, 'POST', '/v2/deployments', {
          name: `soak-${index}-${n}`,
          source: 'codehost',
          source_config: { integration_id: integration.id, repo_url: integration.repos[0]!.url },
          source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
          secrets: [],
        });
        if (created)
          await call('delete deployment', 204, 'DELETE', `/v2/deployments/${created.id}?delete_tracing_project=true`);
      } else if (dice < 0.9) {
        const destination = await call<{ id: string }>(
          'create destination',
          200,
          'POST',
          '/api/v1/bulk-exports/destinations',
          destinationBody(`d-${index}-${n}`),
        );
        if (destination)
          await call('delete destination', 204, 'DELETE', `/api/v1/bulk-exports/destinations/${destination.id}`);
      } else await call('health', 200, 'GET', '/_localplane/health');
    }
  };

  const rss: number[] = [rssMb(pid)];
  const sampler = setInterval(() => rss.push(rssMb(pid)), sampleSeconds * 1000);
  const began = performance.now();
  await Promise.all([exporting, ...Array.from({ length: connections }, (_, index) => connection(index))]);
  const elapsed = (performance.now() - began) / 1000;
  clearInterval(sampler);
  rss.push(rssMb(pid));
  agent.destroy();
  await server.stop();

  latencies.sort((a, b) => a - b);
  console.log(
    `soak: ${requests} requests in ${elapsed.toFixed(1)} s over ${connections} connections ` +
      `= ${Math.round(requests / elapsed)} requests/s; ${exportsDone} exports completed`,
  );
  const summary = (values: number[]) =>
    `median ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms, ` +
    `max ${(values.at(-1) ?? NaN).toFixed(1)} ms`;
  for (const [kind, values] of [...latenciesByKind].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`  ${kind}: ${values.length}; ${summary(values.sort((a, b) => a - b))}`);
  }
  console.log(`latency: ${summary(latencies)}`);
  console.log(`server RSS (MB) every ${sampleSeconds} s: ${rss.map((value) => value.toFixed(0)).join(' ')}`);
  console.log(`errors: ${errors.length}`);
  for (const error of errors.slice(0, 20)) console.log(`  ${error}`);
  if (errors.length > 0) process.exitCode = 1;
}

await main();
