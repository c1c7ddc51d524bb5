// `localplane verify`: recordings of real exchanges with an upstream localplane (another seed, so every id it creates differs), replayed into a fresh instance and compared.
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyJson, readRecording, type HarEntry } from '../src/recording/har.ts';
import { compareAnswers, describeDifference } from '../src/recording/verify-compare.ts';
import { start, verifyRecording, type FixturesView, type Localplane, type VerifyReport } from '../src/index.ts';
import { expectUsageError, runCli } from './support/cli.ts';
import { s3For } from './support/objstore.ts';
import { TestRecorder } from './support/recording.ts';

const dir = mkdtempSync(join(tmpdir(), 'localplane-verify-'));
const CLEAN = join(dir, 'clean.har');
const FAULTED = join(dir, 'faulted.har');
const RESHAPED = join(dir, 'reshaped.har');

const BUCKET = 'team-traces';
const DEPLOYMENT_SECRET = 'sk-verify-deployment-secret-1';
const CLIENT_SECRET = 'lp-oauth-verify-client-secret-1';

let fixtures: FixturesView;
const globex = () => fixtures.workspaces.find((workspace) => workspace.tier === 'enterprise')!;
const keyPair = (index: number) => {
  const { access_key_id, secret_access_key } = fixtures.objstore.keys[index]!;
  return { access_key_id, secret_access_key };
};

/**
 * Destinations, an export to completion, its runs, a listener, a deployment created, revised,
 * patched and deleted, OAuth provider CRUD, and 404, 409 and 422 answers, as the Globex workspace.
 * Before recording, a bucket and a destination the recording does not show are made upstream.
 */
async function recordScenario(path: string, upstream: Localplane, baseUrl: string): Promise<void> {
  const workspace = globex();
  const auth = { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id };
  await s3For(upstream.objstoreUrl, fixtures.objstore.keys[0]!).send(new CreateBucketCommand({ Bucket: BUCKET }));
  const earlier = await fetch(`${upstream.apiUrl}/api/v1/bulk-exports/destinations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ display_name: 'made before the recording', config: { bucket_name: 'exports', prefix: 'earlier' }, credentials: keyPair(0) }),
  });
  const earlierId = ((await earlier.json()) as { id: string }).id;

  const api = new TestRecorder(path, baseUrl, auth, () => upstream.clock.now());
  const destination = await api.post('/api/v1/bulk-exports/destinations', {
    display_name: 'team traces',
    config: { bucket_name: BUCKET, prefix: 'lp/verify', endpoint_url: upstream.objstoreUrl },
    credentials: keyPair(0),
  });
  await api.get(`/api/v1/bulk-exports/destinations/${earlierId}`);
  await api.get('/api/v1/bulk-exports/destinations');
  await api.patch(`/api/v1/bulk-exports/destinations/${destination.body.id}`, { credentials: keyPair(3) });
  const created = await api.post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: workspace.sessions[0]!.id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-02T00:00:00Z',
    format_version: 'v2_beta',
    compression: 'snappy',
  });
  for (let polls = 0; (await api.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status !== 'Completed'; polls++) {
    if (polls === 10) throw new Error('the upstream export did not complete');
    await upstream.clock.advance(30);
  }
  const runs = await api.get(`/api/v1/bulk-exports/${created.body.id}/runs`);
  await api.get(`/api/v1/bulk-exports/${created.body.id}/runs/${runs.body[0].id}`);
  await api.delete(`/api/v1/bulk-exports/destinations/${destination.body.id}`);

  const listenerBody = { compute_type: 'k8s', compute_id: 'verify-edge', compute_config: { k8s_namespaces: ['edge'] }, version: '0.12.0' };
  const listener = await api.post('/v2/listeners', listenerBody);
  await api.get('/v2/listeners');
  await api.patch(`/v2/listeners/${listener.body.id}`, { version: '0.13.0' });
  await api.post('/v2/listeners', listenerBody);
  const deployment = await api.post('/v2/deployments', {
    name: 'verify-agent',
    source: 'external_container',
    source_config: { listener_id: listener.body.id, listener_config: { k8s_namespace: 'edge' } },
    source_revision_config: { image_uri: 'registry.example/agent:1' },
    secrets: [{ name: 'MODEL_KEY', value: DEPLOYMENT_SECRET }],
  });
  const deploymentPath = `/v2/deployments/${deployment.body.id}`;
  const revisions = await api.get(`${deploymentPath}/revisions`);
  await upstream.clock.advance(600);
  await api.get(`${deploymentPath}/revisions/${revisions.body.resources[0].id}`);
  await api.patch(deploymentPath, { source_revision_config: { image_uri: 'registry.example/agent:2' } });
  await api.patch(deploymentPath, { secrets: [{ name: 'MODEL_KEY', value: `${DEPLOYMENT_SECRET}-rotated` }] });
  await upstream.clock.advance(600);
  await api.get(`${deploymentPath}/revisions`);
  await api.get(deploymentPath);
  await api.get('/v2/deployments?name_contains=verify');
  await api.delete(deploymentPath);
  await upstream.clock.advance(600);
  await api.get(deploymentPath);
  await api.delete(`/v2/listeners/${listener.body.id}`);

  await api.post('/v2/auth/providers', {
    provider_id: 'verify-chat',
    name: 'Chat',
    client_id: 'chat-client',
    client_secret: CLIENT_SECRET,
    auth_url: 'https://chat.example/authorize',
    token_url: 'https://chat.example/token',
  });
  await api.get('/v2/auth/providers');
  await api.get('/v2/auth/providers/verify-chat');
  await api.patch('/v2/auth/providers/verify-chat', { name: 'Chat desk', client_secret: `${CLIENT_SECRET}-rotated` });
  await api.delete('/v2/auth/providers/verify-chat');
  await api.get('/v2/auth/providers/verify-chat');

  await api.get('/v2/deployments/00000000-0000-4000-8000-000000000000');
  await api.get('/v2/listeners?limit=101');
  await api.post('/v2/deployments', { name: 'no-source' });
  await api.get('/v1/integrations/forge/codehost/not-a-uuid/repos');
  await api.get(`/v1/integrations/forge/codehost/${workspace.integrations[0]!.id}/repos`);
  api.close();
}

interface Reshaping {
  method: string;
  path: RegExp;
  reshape: (body: any) => unknown;
}

/** Drifts on purpose: each reshaping changes the first answer that matches it; everything else passes through. */
const RESHAPINGS: Reshaping[] = [
  {
    method: 'POST',
    path: /^\/v2\/listeners$/,
    reshape: (body) => Object.fromEntries(Object.entries(body).map(([key, value]) => [key === 'compute_id' ? 'computeId' : key, value])),
  },
  { method: 'GET', path: /^\/v2\/auth\/providers$/, reshape: (body) => body.map(({ client_id: _dropped, ...provider }: Record<string, unknown>) => provider) },
  { method: 'GET', path: /^\/api\/v1\/bulk-exports\/[^/]+\/runs\/[^/]+$/, reshape: (body) => ({ ...body, retry_number: String(body.retry_number) }) },
];

/** A small HTTP server in front of the upstream that reshapes answers as RESHAPINGS say. */
async function reshapingProxy(upstreamUrl: string): Promise<{ url: string; server: Server }> {
  const pending = [...RESHAPINGS];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>;
    const answer = await fetch(`${upstreamUrl}${request.url}`, { method: request.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined });
    let text = await answer.text();
    const path = new URL(request.url!, upstreamUrl).pathname;
    const reshaping = pending.find((candidate) => candidate.method === request.method && candidate.path.test(path));
    if (reshaping) {
      pending.splice(pending.indexOf(reshaping), 1);
      text = JSON.stringify(reshaping.reshape(JSON.parse(text)));
    }
    const contentType = answer.headers.get('content-type');
    response.writeHead(answer.status, contentType === null ? {} : { 'content-type': contentType });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  const upstream = await start({ port: 0, objstorePort: 0, freezeClock: true, seed: 2, log: () => {} });
  try {
    fixtures = await upstream.fixtures();
    await recordScenario(CLEAN, upstream, upstream.apiUrl);

    await upstream.reset();
    upstream.faultRules.add({ match: { method: 'GET', path: `/v1/integrations/forge/codehost/${globex().integrations[0]!.id}/repos` }, action: { status: 503 }, count: 1 });
    await recordScenario(FAULTED, upstream, upstream.apiUrl);

    await upstream.reset();
    const proxy = await reshapingProxy(upstream.apiUrl);
    await recordScenario(RESHAPED, upstream, proxy.url);
    proxy.server.close();
  } finally {
    // Stopped before any replay: a destination naming its objstore must be pointed at the replay's own.
    await upstream.stop();
  }
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each exchange that is not the same, as `<index> <method> <path>` with its reasons. */
const differing = (report: VerifyReport, outcome: 'drift' | 'not comparable') =>
  report.results.filter((result) => result.outcome === outcome).map(({ index, method, path, reasons }) => ({ exchange: `${index} ${method} ${path}`, reasons }));

const entries = (path: string) => readRecording(path).entries;
const exchangeOf = (path: string, method: string, pattern: RegExp) => {
  const index = entries(path).findIndex((entry) => entry.request.method === method && pattern.test(new URL(entry.request.url).pathname));
  const entry = entries(path)[index]!;
  return `${index} ${method} ${new URL(entry.request.url).pathname}`;
};

describe('verifyRecording', () => {
  let clean: VerifyReport;
  beforeAll(async () => {
    clean = await verifyRecording(CLEAN);
  }, 60_000);

  it('finds no drift in a recording of the same behaviour, with every id the upstream created mapped to the one created here', () => {
    expect(clean.drift, JSON.stringify(differing(clean, 'drift'), null, 1)).toBe(0);
    expect(clean).toMatchObject({ exchanges: entries(CLEAN).length, skipped: 0 });
    expect(clean.same).toBe(clean.exchanges - 1);
    const recordedDestination = bodyOf(entries(CLEAN)[0]!).id;
    expect(clean.ids[recordedDestination]).toMatch(/^[0-9a-f-]{36}$/);
    expect(clean.ids[recordedDestination]).not.toBe(recordedDestination);
    // The export, its run, the listener, the deployment, its revisions and the provider: each mapped.
    expect(Object.keys(clean.ids).length).toBeGreaterThanOrEqual(8);
  });

  it('reports a request about a resource the upstream had before the recording as not comparable', () => {
    const earlierId = new URL(entries(CLEAN)[1]!.request.url).pathname.split('/').pop()!;
    expect(differing(clean, 'not comparable')).toEqual([
      { exchange: `1 GET /api/v1/bulk-exports/destinations/${earlierId}`, reasons: [`${earlierId} existed upstream before the recording`] },
    ]);
  });

  it('replays from a recording whose key, credentials and secrets are masked: none of them is in the file', () => {
    const text = readFileSync(CLEAN, 'utf8');
    for (const secret of [globex().api_key, keyPair(0).secret_access_key, keyPair(3).secret_access_key, DEPLOYMENT_SECRET, CLIENT_SECRET]) expect(text.includes(secret), secret).toBe(false);
    const sent = entries(CLEAN).map((entry) => bodyJson(entry.request.postData) as Record<string, unknown> | undefined);
    expect(sent.flatMap((body) => (body?.credentials === undefined ? [] : [body.credentials]))).toEqual(['********', '********']);
    expect(sent.flatMap((body) => (Array.isArray(body?.secrets) || body?.secrets === undefined ? [] : [body.secrets]))).toEqual(['********', '********']);
  });

  it('reports the one exchange a fault rule changed upstream, as its status', async () => {
    const report = await verifyRecording(FAULTED);
    expect(differing(report, 'drift')).toEqual([{ exchange: exchangeOf(FAULTED, 'GET', /^\/v1\/integrations\/forge\/codehost\/[0-9a-f-]{36}\/repos$/), reasons: ['status 503 → 200'] }]);
    expect(report.notComparable).toBe(1);
  }, 60_000);

  it('reports exactly the answers a proxy reshaped: a field renamed, one dropped, one of another type', async () => {
    const report = await verifyRecording(RESHAPED);
    expect(differing(report, 'drift')).toEqual([
      { exchange: exchangeOf(RESHAPED, 'GET', /\/runs\/[^/]+$/), reasons: ['body.retry_number: string → number'] },
      { exchange: exchangeOf(RESHAPED, 'POST', /^\/v2\/listeners$/), reasons: ['body.computeId: missing', 'body.compute_id: extra'] },
      { exchange: exchangeOf(RESHAPED, 'GET', /^\/v2\/auth\/providers$/), reasons: ['body[].client_id: extra'] },
    ]);
  }, 60_000);
});

describe('verifyRecording: mapping and what is not compared', () => {
  it('replays into a running instance as it is (--url), moving its frozen clock by the recorded gaps', async () => {
    const running = await start({ port: 0, objstorePort: 0, freezeClock: true, log: () => {} });
    try {
      const report = await verifyRecording(CLEAN, { url: running.apiUrl });
      expect(report.drift, JSON.stringify(differing(report, 'drift'))).toBe(0);
      const exportId = report.ids[bodyOf(entries(CLEAN)[4]!).id]!;
      const exported = await running.request(`/api/v1/bulk-exports/${exportId}`, { headers: { 'X-API-Key': globex().api_key, 'X-Tenant-Id': globex().id } });
      expect(((await exported.json()) as { status: string }).status).toBe('Completed');
    } finally {
      await running.stop();
    }
  }, 60_000);

  it('maps a workspace the instance does not have to the one asked for, and refuses one it does not have', async () => {
    const elsewhere = join(dir, 'elsewhere.har');
    writeFileSync(elsewhere, readFileSync(CLEAN, 'utf8').replaceAll(globex().id, '7d1c8a52-3b7e-4d0a-9f55-2a6c1e9b0d44'));
    const report = await verifyRecording(elsewhere, { workspace: globex().id });
    expect(report).toMatchObject({ drift: 0, notComparable: 1 });
    await expect(verifyRecording(elsewhere, { workspace: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow(/workspace 00000000-0000-4000-8000-000000000000 is not a fixture workspace of the instance/);
  }, 60_000);

  it("skips what is not the API (a browser's page assets) and does not compare answers the recorder broke or cut", async () => {
    const log = readRecording(CLEAN);
    const listed = log.entries.find((entry) => entry.request.method === 'GET' && entry.request.url.endsWith('/v2/listeners'))!;
    const asset = structuredClone(listed);
    asset.request.url = 'https://app.example/static/main.js';
    asset.response.content = { size: 9, mimeType: 'text/javascript', text: 'export {}' };
    const unreachable = structuredClone(listed);
    unreachable.response.status = 502;
    unreachable._error = 'upstream unreachable: connect ECONNREFUSED';
    const cut = structuredClone(listed);
    cut.response.content.size += 100;
    const first = log.entries.length;
    const report = await verifyRecording({ ...log, entries: [...log.entries, asset, unreachable, cut] });
    expect(report.results.slice(first)).toEqual([
      { index: first, method: 'GET', path: '/static/main.js', outcome: 'skipped', reasons: ['not a request to the API'] },
      { index: first + 1, method: 'GET', path: '/v2/listeners', outcome: 'not comparable', reasons: ["the recorded answer is the recorder's error: upstream unreachable: connect ECONNREFUSED"] },
      { index: first + 2, method: 'GET', path: '/v2/listeners', outcome: 'not comparable', reasons: [`the recorded answer was cut (${cut.response.content.size - 100} of ${cut.response.content.size} bytes)`] },
    ]);
    expect(report).toMatchObject({ drift: 0, notComparable: 3, skipped: 1 });
  }, 60_000);
});

describe('compareAnswers', () => {
  const answer = (status: number, body: unknown, contentType = 'application/json') => ({ status, contentType, body, bodyKept: true });
  const differences = (recorded: ReturnType<typeof answer>, here: ReturnType<typeof answer>) => compareAnswers(recorded, here).map(describeDifference);

  it('takes null for any type, an empty list for any list, and compares list elements merged', () => {
    expect(differences(answer(200, { a: null, b: [], c: [{ x: 1 }, { y: 'z' }] }), answer(200, { a: 'text', b: [{ q: 1 }], c: [{ x: 2, y: 'w' }] }))).toEqual([]);
    expect(differences(answer(200, { resources: [{ name: 'a' }] }), answer(200, { resources: [{}] }))).toEqual(['body.resources[].name: missing']);
    expect(differences(answer(200, { count: 1, 'a.b': true }), answer(200, { count: '1', 'a.b': true }))).toEqual(['body.count: number → string']);
  });

  it("compares a 422's errors by type and loc, and a detail string against a list by its type", () => {
    const error = (type: string, loc: string[]) => ({ type, loc, msg: 'any words' });
    expect(
      differences(answer(422, { detail: [error('missing', ['body', 'name']), error('enum', ['body', 'source'])] }), answer(422, { detail: [error('string_type', ['body', 'name'])] })),
    ).toEqual(['body.detail: 2 errors → 1 error', 'body.detail[0].type: "missing" → "string_type"']);
    expect(differences(answer(422, { detail: 'Invalid' }), answer(422, { detail: [error('missing', ['body'])] }))).toEqual(['body.detail: string → array']);
  });

  it('compares the media type without its parameters; a different status is the one difference', () => {
    expect(differences(answer(200, {}, 'application/json'), answer(200, {}, 'application/json; charset=utf-8'))).toEqual([]);
    expect(differences(answer(204, undefined, ''), answer(200, { a: 1 }))).toEqual(['status 204 → 200']);
  });
});

describe('localplane verify', () => {
  it('prints the exchanges that differ and a summary, and exits 1 on drift', async () => {
    const result = await runCli(['verify', RESHAPED]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ *# {2}method {2}path +what differs$/);
    expect(lines).toContainEqual(expect.stringMatching(/^ *\d+ {2}GET {5}\/v2\/auth\/providers +body\[\]\.client_id: extra$/));
    expect(lines.at(-1)).toBe(`${entries(RESHAPED).length} exchanges: ${entries(RESHAPED).length - 4} same, 3 drift, 1 not comparable, 0 skipped`);
  }, 60_000);

  it('exits 0 on a recording without drift; --json prints the report as one document', async () => {
    const result = await runCli(['verify', CLEAN, '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ exchanges: entries(CLEAN).length, drift: 0, notComparable: 1 });
  }, 60_000);

  it.each([
    [['verify'], /^localplane: verify needs a recording: localplane verify <recording.har> \(see localplane --help\)\n$/],
    [['verify', join(dir, 'missing.har')], /^localplane: .*missing\.har cannot be read: ENOENT/],
    [['verify', CLEAN, '--url', 'localhost:9400'], /^localplane: --url must be an http:\/\/ or https:\/\/ URL, got "localhost:9400"/],
    [['verify', CLEAN, '--sql', 'select 1'], /^localplane: --sql is not an option of localplane verify/],
  ])('%j is a usage error (exit code 2)', (args, words) => expectUsageError(args, words));

  it('verify --help lists its own flags with their defaults', async () => {
    const result = await runCli(['verify', '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const flag of ['--url <url>', '--workspace <id>', '--json']) expect(result.stdout).toMatch(new RegExp(`^  ${flag} +\\S.*\\n +\\(default .+\\)$`, 'm'));
    expect(result.stdout).not.toContain('--port');
  });
});

function bodyOf(entry: HarEntry): any {
  return JSON.parse(entry.response.content.text!);
}
