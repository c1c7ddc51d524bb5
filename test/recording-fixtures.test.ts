// `localplane fixtures from-recording`: a recording of real exchanges with an upstream localplane
// becomes a fixtures directory that starts an instance with the upstream's resources.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../src/fixtures/files.ts';
import { start, type Localplane } from '../src/index.ts';
import { fixturesFromRecording, FromRecordingError, REPORT_FILE, type FromRecordingReport } from '../src/recording/fixtures.ts';
import { expectUsageError, runCli } from './support/cli.ts';
import { Api, keyWith, type FixturesView, type FixtureWorkspace } from './support/instance.ts';
import { s3For } from './support/objstore.ts';
import { RecordingClient, recordingWriter } from './support/recording-fixtures.ts';

const DEPLOYMENT_SECRET = 'sk-recorded-deployment-secret-4711';
const CLIENT_SECRET = 'recorded-oauth-client-secret-0815';
const OBJSTORE_KEY = { access_key_id: 'RECORDEDKEY000000042', secret_access_key: 'recorded-objstore-secret-key-1234' };
const RECORDED_BUCKET = 'recorded-landing';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-from-recording-'));
const cacheDir = join(scratch, 'cache');
let upstream: Localplane;
let globex: FixtureWorkspace;
let recording: string;
/** What the upstream answered, to compare the started instance's answers with. */
const seen = {} as {
  deployments: any[];
  deleted: string;
  revisions: Map<string, any[]>;
  provider: any;
  listener: any;
  destination: any;
  export: any;
};

/** The scenario, recorded: a listener, three deployments (one deleted), revisions, an OAuth provider, a destination and an export. */
async function record(client: RecordingClient, admin: Api): Promise<void> {
  const integrations = (await client.call('GET', '/v1/integrations/forge/codehost/install')).body;
  await client.call('GET', `/v1/integrations/forge/codehost/${integrations[0].id}/repos`);
  seen.listener = (await client.call('POST', '/v2/listeners', { compute_type: 'k8s', compute_id: 'recorded-cluster', compute_config: { k8s_namespaces: ['graphs', 'staging'] }, version: '1.2.0' })).body;
  const created = [];
  for (const name of ['recorded-graph-a', 'recorded-graph-b', 'recorded-graph-c']) {
    const answer = await client.call('POST', '/v2/deployments', {
      name,
      source: 'external_container',
      source_config: { listener_id: seen.listener.id, listener_config: { k8s_namespace: 'graphs' } },
      source_revision_config: { image_uri: `registry.example/${name}:1` },
      secrets: [{ name: 'OPENAI_API_KEY', value: DEPLOYMENT_SECRET }],
      secret_references: [{ name: 'DB_PASSWORD', secret_name: `${name}-secrets`, secret_key: 'db-password' }],
    });
    expect(answer.status).toBe(201);
    created.push(answer.body);
  }
  const [a, b, c] = created;
  expect((await client.call('PATCH', `/v2/deployments/${a.id}`, { source_revision_config: { image_uri: 'registry.example/recorded-graph-a:2' } })).status).toBe(200);
  expect((await client.call('POST', `/v2/deployments/${b.id}/revisions`, { source_revision_config: { image_uri: 'registry.example/recorded-graph-b:2' } })).status).toBe(201);
  // Deleted, but still listed AWAITING_DELETE for an hour: later answers show it, and it stays out.
  expect((await admin.request('PATCH', '/config', { body: { deployment_deletion_seconds: 3600 } })).status).toBe(200);
  expect((await client.call('DELETE', `/v2/deployments/${c.id}`)).status).toBe(204);
  seen.deleted = c.id;
  seen.revisions = new Map();
  for (const { id } of [a, b]) seen.revisions.set(id, (await client.call('GET', `/v2/deployments/${id}/revisions`)).body.resources);

  const provider = await client.call('POST', '/v2/auth/providers', {
    provider_id: 'recorded-sso',
    name: 'Recorded SSO',
    client_id: 'recorded-client',
    client_secret: CLIENT_SECRET,
    auth_url: 'https://sso.recorded.example/authorize',
    token_url: 'https://sso.recorded.example/token',
    uses_pkce: true,
  });
  expect(provider.status).toBe(200);
  seen.provider = provider.body;
  await client.call('GET', '/v2/auth/providers');
  await client.call('GET', '/v2/listeners');

  const added = await admin.request('POST', '/objstore/keys', { body: { ...OBJSTORE_KEY, permissions: ['create', 'get', 'delete', 'multipart'] } });
  expect(added.status).toBe(201);
  const destination = await client.call('POST', '/api/v1/bulk-exports/destinations', {
    destination_type: 'objstore',
    display_name: 'Recorded warehouse',
    config: { bucket_name: RECORDED_BUCKET, prefix: 'traces/recorded' },
    credentials: OBJSTORE_KEY,
  });
  expect(destination.status, JSON.stringify(destination.body)).toBe(200);
  seen.destination = destination.body;
  const exported = await client.call('POST', '/api/v1/bulk-exports', {
    bulk_export_destination_id: seen.destination.id,
    session_id: globex.sessions[0]!.id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-01T06:00:00Z',
    format_version: 'v2_beta',
    compression: 'snappy',
  });
  expect(exported.status, JSON.stringify(exported.body)).toBe(200);
  seen.export = (await client.call('GET', `/api/v1/bulk-exports/${exported.body.id}`)).body;
  await client.call('GET', '/api/v1/bulk-exports/destinations');
  seen.deployments = (await client.call('GET', '/v2/deployments?limit=100')).body.resources;
}

beforeAll(async () => {
  mkdirSync(cacheDir, { mode: 0o700 });
  upstream = await start({ port: 0, objstorePort: 0, freezeClock: true, log: () => {} });
  const admin = new Api(`${upstream.apiUrl}/_localplane`);
  const fixtures = (await admin.request<FixturesView>('GET', '/fixtures')).body;
  globex = fixtures.workspaces.find((workspace) => workspace.self_hosted)!;
  await s3For(upstream.objstoreUrl, keyWith(fixtures, (permissions) => permissions.includes('buckets'))).send(new CreateBucketCommand({ Bucket: RECORDED_BUCKET }));
  recording = join(scratch, 'recording.har');
  const writer = recordingWriter(recording);
  try {
    await record(new RecordingClient(upstream.apiUrl, writer, { 'X-API-Key': globex.api_key, 'X-Tenant-Id': globex.id }), admin);
  } finally {
    writer.close();
  }
});

afterAll(async () => {
  await upstream?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Every file of the directory holds none of the recording's secrets, nor the upstream's API key. */
function expectNoSecretIn(dir: string): void {
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    for (const secret of [DEPLOYMENT_SECRET, CLIENT_SECRET, OBJSTORE_KEY.secret_access_key, OBJSTORE_KEY.access_key_id, globex.api_key, '********']) {
      expect(text, `${name} holds ${secret}`).not.toContain(secret);
    }
  }
}

describe('fixtures from-recording', () => {
  let report: FromRecordingReport;
  let dir: string;
  let instance: Localplane;
  let api: ReturnType<Api['as']>;

  beforeAll(async () => {
    dir = join(scratch, 'recorded-only');
    report = fixturesFromRecording({ recording, out: dir, recordedOnly: true });
    instance = await start({ fixturesDir: dir, port: 0, objstorePort: 0, freezeClock: true, cacheDir, log: () => {} });
    api = new Api(instance.apiUrl).as({ id: report.workspace.id, api_key: report.workspace.apiKey });
  });
  afterAll(async () => {
    await instance?.stop();
  });

  it("puts the recorded resources in the recorded workspace, with a new API key, and says so", () => {
    expect(report.workspace).toMatchObject({ id: globex.id, name: globex.name });
    expect(report.workspace.apiKey).toMatch(/^lp_recorded_[0-9a-f]{24}$/);
    expect(report.placed).toMatchObject({ deployments: seen.deployments.length - 1, listeners: 3, 'OAuth providers': 4, destinations: 1, exports: 1, 'codehost integrations': 1 });
    expect(report.notPlaced).toEqual([]);
    const text = readFileSync(join(dir, REPORT_FILE), 'utf8');
    expect(text).toContain(`Workspace ${globex.id} (${globex.name}), API key ${report.workspace.apiKey}`);
    expect(text).toMatch(/revisions were only named by their deployments/);
    expect(text).toMatch(/Export runs are not kept/);
  });

  it("answers GET /v2/deployments as the upstream did: the same deployments, ids, names, sources, configs, statuses and times; the deleted one absent", async () => {
    const answer = await api.get('/v2/deployments?limit=100');
    expect(answer.status).toBe(200);
    expect(seen.deployments.find((deployment) => deployment.id === seen.deleted)).toMatchObject({ status: 'AWAITING_DELETE' });
    const upstreamDeployments = seen.deployments.filter((deployment) => deployment.id !== seen.deleted);
    expect(answer.body.resources).toHaveLength(upstreamDeployments.length);
    for (const [index, upstreamDeployment] of upstreamDeployments.entries()) {
      expect(answer.body.resources[index], upstreamDeployment.name).toEqual(upstreamDeployment);
    }
    for (const [id, revisions] of seen.revisions) expect((await api.get(`/v2/deployments/${id}/revisions`)).body.resources).toEqual(revisions);
  });

  it('has the OAuth provider without its client secret, the listener, the destination on the fixture objstore and the export', async () => {
    expect((await api.get('/v2/auth/providers')).body).toContainEqual(seen.provider);
    expect((await api.get('/v2/listeners?limit=100')).body.resources).toContainEqual(seen.listener);
    const { credentials_keys: _keys, ...destination } = seen.destination;
    expect((await api.get(`/api/v1/bulk-exports/destinations/${seen.destination.id}`)).body).toMatchObject(destination);
    const { status, updated_at: _updated, ...settings } = seen.export;
    expect((await api.get(`/api/v1/bulk-exports/${seen.export.id}`)).body).toMatchObject(settings);
    expect(status).toMatch(/^(Created|Running|Completed)$/);
  });

  it('runs the recorded export into the recorded bucket, now a fixture bucket, signing with the fixture key pair', async () => {
    expect(loadFixtures(dir).objstore.buckets).toContain(RECORDED_BUCKET);
    const path = `/api/v1/bulk-exports/${seen.export.id}`;
    // The instance's clock is frozen (so the deployments compare as recorded): run the export's work.
    await instance.clock.runUntilIdle();
    expect((await api.get(path)).body.status).toBe('Completed');
    const files = (await api.get(`${path}/runs`)).body.flatMap((run: any) => run.metadata.result?.exported_files ?? []);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(file).toMatch(new RegExp(`^${RECORDED_BUCKET}/traces/recorded/export_id=${seen.export.id}/`));
  });

  it.each([
    ['bulk-exports.json', (file: any) => (file.workspaces[0].destinations[0].objstore_key = 'LPNOSUCHKEY'), /LPNOSUCHKEY is not a key of objstore\.json[^]*workspaces\[0\]\.destinations\[0\]\.objstore_key/],
    ['bulk-exports.json', (file: any) => (file.workspaces[0].exports[0].session_id = '00000000-0000-4000-8000-000000000000'), /not a tracing project[^]*exports\[0\]\.session_id/],
    ['bulk-exports.json', (file: any) => (file.workspaces[0].exports[0].filter = 'eq(name'), /a filter that parses[^]*exports\[0\]\.filter/],
    ['deployments.json', (file: any) => (file.workspaces[0].listed_deployments[0].secrets = [{ name: 'OPENAI_API_KEY', value: 'sk-live' }]), /Unrecognized key: "value"[^]*listed_deployments\[0\]\.secrets\[0\]/],
    ['deployments.json', (file: any) => (file.workspaces[0].listed_deployments[0].active_revision_id = '00000000-0000-4000-8000-000000000000'), /not one of this deployment's revisions[^]*listed_deployments\[0\]\.active_revision_id/],
    ['objstore.json', (file: any) => file.buckets.push('../../victim'), /a bucket name is[^]*buckets\[4\]/],
  ])('the fixtures it writes are checked as untrusted input: a bad value in %s is refused naming the file and the field', (name, spoil, words) => {
    const spoilt = join(scratch, `spoilt-${name}-${Math.random().toString(36).slice(2)}`);
    cpSync(dir, spoilt, { recursive: true });
    const file = JSON.parse(readFileSync(join(spoilt, name), 'utf8'));
    spoil(file);
    writeFileSync(join(spoilt, name), JSON.stringify(file));
    expect(() => loadFixtures(spoilt)).toThrow(new RegExp(`^invalid fixture file ${join(spoilt, name).replaceAll('.', '\\.')}: [^]*${words.source}`));
  });

  it('writes no secret: no recorded value, no masked one, not the upstream API key', () => {
    expectNoSecretIn(dir);
    const recorded = readFileSync(recording, 'utf8');
    for (const secret of [DEPLOYMENT_SECRET, CLIENT_SECRET, OBJSTORE_KEY.secret_access_key, globex.api_key]) expect(recorded).not.toContain(secret);
  });
});

describe('localplane fixtures from-recording (the CLI)', () => {
  it('writes the directory, the shipped workspaces beside the recorded one, and prints the report it keeps', async () => {
    const dir = join(scratch, 'cli');
    const result = await runCli(['fixtures', 'from-recording', recording, '--out', dir]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(readFileSync(join(dir, REPORT_FILE), 'utf8'));
    const apiKey = /API key (\S+)/.exec(result.stdout)![1]!;
    const fixtures = loadFixtures(dir);
    expect(fixtures.workspaces.workspaces.map((workspace) => [workspace.name, workspace.api_key === apiKey])).toEqual([
      ['Acme Analytics', false],
      ['Initech Hobby', false],
      ['Globex Research', true],
    ]);
    expect(fixtures.deployments.workspaces.find((workspace) => workspace.workspace_id === globex.id)!.listed_deployments.map((deployment) => deployment.id)).not.toContain(seen.deleted);
    expectNoSecretIn(dir);
  });

  it('refuses a file that is not a HAR recording, and an --out that is not empty (exit code 2)', async () => {
    const notJson = join(scratch, 'not-json.har');
    writeFileSync(notJson, 'GET /v2/deployments 200');
    const notHar = join(scratch, 'not-har.har');
    writeFileSync(notHar, JSON.stringify({ log: { entries: [] } }));
    await expectUsageError(['fixtures', 'from-recording', notJson, '--out', join(scratch, 'never-1')], /not-json\.har is not JSON/);
    await expectUsageError(['fixtures', 'from-recording', notHar, '--out', join(scratch, 'never-2')], /not-har\.har is not a HAR recording: log\.version/);
    const used = join(scratch, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    await expectUsageError(['fixtures', 'from-recording', recording, '--out', used], /--out .*used is not empty/);
    expect(readdirSync(used)).toEqual(['notes.txt']);
    expect(() => fixturesFromRecording({ recording: notHar, out: join(scratch, 'never-3') })).toThrow(FromRecordingError);
    expect(readdirSync(scratch)).not.toContain('never-1');
  });
});
