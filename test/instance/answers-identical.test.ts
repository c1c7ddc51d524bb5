// Answers and exported files stay byte-identical while the hot paths change: a fixed scenario
// over real HTTP against a started instance on a set clock, each answer's status, raw headers
// (Date aside) and body bytes, and each exported Parquet file's bytes read through the S3 API,
// compared with test/instance/golden/answers.json. `LOCALPLANE_UPDATE_GOLDEN=1` writes that file anew: do
// it only for a change that means to alter an answer, and say so in its commit.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { start, type Localplane } from '../../src/index.ts';
import { OBJSTORE_PERMISSIONS } from '../../src/objstore/index.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { credentialsOf, type FixturesView } from '../support/instance.ts';
import { getBytes, listKeys, s3For } from '../support/objstore.ts';

const GOLDEN = fileURLToPath(new URL('./golden/answers.json', import.meta.url));
const NOW = '2026-11-02T12:00:00Z';
const BUCKET = 'exports';

interface Answer {
  exchange: string;
  status: number;
  headers: string[];
  bytes: number;
  sha256: string;
  head: string;
}

interface ExportedFile {
  key: string;
  bytes: number;
  sha256: string;
}

interface Golden {
  answers: Answer[];
  files: ExportedFile[];
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let lp: Localplane;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const answers: Answer[] = [];

/** The ports the instance happened to bind, which appear in some answers, as fixed placeholders. */
function portless(text: string): string {
  return text
    .replaceAll(lp.apiUrl, 'http://api.test')
    .replaceAll(lp.objstoreUrl, 'http://objstore.test')
    .replaceAll(new URL(lp.apiUrl).host, 'api.test')
    .replaceAll(new URL(lp.objstoreUrl).host, 'objstore.test')
    .replaceAll(lp.filesDir!, '<files dir>')
    .replaceAll(lp.dataDir, '<data dir>');
}

async function send(
  label: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<unknown> {
  const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers = {
    ...options.headers,
    ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
  };
  const { status, rawHeaders, bytes } = await new Promise<{ status: number; rawHeaders: string[]; bytes: Buffer }>(
    (resolve, reject) => {
      const outgoing = request(`${lp.apiUrl}${path}`, { method, headers, agent }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode!, rawHeaders: incoming.rawHeaders, bytes: Buffer.concat(chunks) }),
        );
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    },
  );
  const pairs: string[] = [];
  for (let at = 0; at < rawHeaders.length; at += 2) {
    if (rawHeaders[at]!.toLowerCase() !== 'date') pairs.push(portless(`${rawHeaders[at]}: ${rawHeaders[at + 1]}`));
  }
  const text = portless(bytes.toString('utf8'));
  const normalized = Buffer.from(text);
  answers.push({
    exchange: `${label}: ${method} ${path}`,
    status,
    headers: pairs,
    bytes: normalized.length,
    sha256: sha256(normalized),
    head: text.slice(0, 160),
  });
  const type = rawHeaders.find((_, at) => at % 2 === 0 && rawHeaders[at]!.toLowerCase() === 'content-type');
  return type && /json/.test(rawHeaders[rawHeaders.indexOf(type) + 1]!) && text
    ? JSON.parse(bytes.toString('utf8'))
    : text;
}

beforeAll(async () => {
  lp = await start({ port: 0, objstorePort: 0, freezeClock: true });
  await lp.clock.set(NOW);
});

afterAll(async () => {
  agent.destroy();
  await lp?.stop();
});

test('answers and exported files are byte-identical to the golden ones', async () => {
  const fixtures = (await send('fixtures', 'GET', '/_localplane/fixtures')) as FixturesView;
  const [selfHosted, other] = [
    fixtures.workspaces.find((workspace) => workspace.self_hosted)!,
    fixtures.workspaces.find((workspace) => !workspace.self_hosted)!,
  ];
  const auth = { 'X-API-Key': selfHosted.api_key, 'X-Tenant-Id': selfHosted.id };
  const keyOnly = { 'X-API-Key': other.api_key };
  const fullKey = fixtures.objstore.keys.find((key) =>
    OBJSTORE_PERMISSIONS.every((permission) => key.permissions.includes(permission)),
  )!;

  // The hot reads, their variants and refusals, before any write.
  for (const [name, headers] of [
    ['self-hosted', auth],
    ['key only', keyOnly],
  ] as const) {
    await send(name, 'GET', '/v2/deployments?limit=20', { headers });
    await send(name, 'GET', '/v2/deployments?limit=20', { headers });
    await send(name, 'GET', '/v2/deployments?limit=5&offset=2', { headers });
    await send(name, 'GET', '/v2/deployments', { headers });
    await send(name, 'GET', '/v2/auth/providers', { headers });
  }
  await send('status filter', 'GET', '/v2/deployments?status=READY&deployment_type=prod', { headers: auth });
  await send('name filter', 'GET', '/v2/deployments?name_contains=harness', { headers: auth });
  await send('limit out of range', 'GET', '/v2/deployments?limit=0', { headers: auth });
  await send('limit not a number', 'GET', '/v2/deployments?limit=many&offset=-1', { headers: auth });
  await send('no key', 'GET', '/v2/deployments?limit=20');
  await send('unknown key', 'GET', '/v2/deployments?limit=20', { headers: { 'X-API-Key': fixtures.unknown_api_key } });
  await send('unknown route', 'GET', '/v2/nothing-here', { headers: auth });
  await send('unknown export', 'GET', '/api/v1/bulk-exports/00000000-0000-4000-8000-000000000000', { headers: auth });
  await send('malformed export id', 'GET', '/api/v1/bulk-exports/not-a-uuid', { headers: auth });

  // Writes between reads of the same pages.
  const created = (await send('create', 'POST', '/v2/deployments', {
    headers: auth,
    body: codehostDeploymentBody(selfHosted, 'golden-graph', {
      secrets: [{ name: 'GOLDEN_TOKEN', value: 'golden-secret-value-42' }],
    }),
  })) as { id: string };
  await send('after create', 'GET', '/v2/deployments?limit=20', { headers: auth });
  await send('invalid create', 'POST', '/v2/deployments', { headers: auth, body: { name: '' } });
  await send('patch', 'PATCH', `/v2/deployments/${created.id}`, {
    headers: auth,
    body: { source_revision_config: { repo_ref: 'release', graph_config_path: 'graph.json' } },
  });
  await send('after patch', 'GET', '/v2/deployments?limit=20', { headers: auth });
  await lp.clock.advance(600);
  await send('ten minutes later', 'GET', '/v2/deployments?limit=20', { headers: auth });

  // An export: its status while pending and once completed, its runs, and the files it wrote.
  const destination = (await send('destination', 'POST', '/api/v1/bulk-exports/destinations', {
    headers: auth,
    body: {
      destination_type: 'objstore',
      display_name: 'Golden warehouse',
      config: { bucket_name: BUCKET, prefix: 'golden' },
      credentials: credentialsOf(fullKey),
    },
  })) as { id: string };
  await send('destinations', 'GET', '/api/v1/bulk-exports/destinations', { headers: auth });
  const exported = (await send('export', 'POST', '/api/v1/bulk-exports', {
    headers: auth,
    body: {
      bulk_export_destination_id: destination.id,
      session_id: selfHosted.sessions[0]!.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-11-01T00:00:00Z',
      format_version: 'v2_beta',
      compression: 'snappy',
    },
  })) as { id: string };
  await send('pending', 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: auth });
  await send('pending again', 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: auth });
  await lp.clock.runUntilIdle();
  await send('completed', 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: auth });
  await send('completed again', 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: auth });
  await send('key only', 'GET', `/api/v1/bulk-exports/${exported.id}`, {
    headers: { 'X-API-Key': selfHosted.api_key },
  });
  await send("another workspace's key", 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: keyOnly });
  const runs = await send('runs', 'GET', `/api/v1/bulk-exports/${exported.id}/runs`, { headers: auth });
  if (Array.isArray(runs) && runs[0])
    await send('run', 'GET', `/api/v1/bulk-exports/${exported.id}/runs/${runs[0].id}`, { headers: auth });
  await lp.clock.advance(3600);
  await send('an hour later', 'GET', `/api/v1/bulk-exports/${exported.id}`, { headers: auth });

  // The API's requests as the journal shows them, the wall time and durations aside (the objstore's carry the SDK's
  // invocation ids and wall-clock signatures).
  const journal = (await (await fetch(`${lp.apiUrl}/_localplane/requests?limit=100`)).json()) as {
    requests: { source: string }[];
  };
  const apiEntries = journal.requests.filter((entry) => entry.source === 'api');
  const journalText = portless(
    JSON.stringify(apiEntries, (key, value) => (key === 'wall_time' || key === 'duration_ms' ? '<varies>' : value)),
  );
  answers.push({
    exchange: 'journal: GET /_localplane/requests?limit=100',
    status: 200,
    headers: [],
    bytes: journalText.length,
    sha256: sha256(Buffer.from(journalText)),
    head: journalText.slice(0, 160),
  });

  const s3 = s3For(lp.objstoreUrl, fullKey);
  const files: ExportedFile[] = [];
  for (const key of (await listKeys(s3, BUCKET, 'golden/')).sort()) {
    const bytes = await getBytes(s3, BUCKET, key);
    files.push({ key: key.replaceAll(exported.id, '<export id>'), bytes: bytes.length, sha256: sha256(bytes) });
  }
  s3.destroy();
  expect(files.length).toBeGreaterThan(0);

  const actual: Golden = { answers, files };
  if (process.env.LOCALPLANE_UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(GOLDEN), { recursive: true });
    writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 1)}\n`);
  }
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Golden;
  expect(actual.answers).toEqual(golden.answers);
  expect(actual.files).toEqual(golden.files);
});
