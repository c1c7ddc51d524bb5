// `localplane record` in front of a real localplane: answers relayed unchanged (streams as they come), every exchange
// in the file, masked, the file whole throughout.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, RecordOptionError, start, type Localplane, type Recorder } from '../../src/index.ts';
import { bodyJson, headerValue, readRecording, type HarEntry } from '../../src/recording/har.ts';
import { RECORDED_BODY_LIMIT } from '../../src/recording/record-body.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { BIN, expectUsageError, REPO_ROOT } from '../support/cli.ts';
import { EventStreamReader } from '../support/event-stream.ts';
import { credentialsOf, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';

const dir = mkdtempSync(join(tmpdir(), 'localplane-record-'));
let upstream: Localplane;
let fixtures: FixturesView;

beforeAll(async () => {
  upstream = await start({ port: 0, objstorePort: 0, log: () => {} });
  // Straight from the upstream: the fixtures view lists API keys as data, which no masking hides.
  fixtures = (await (await fetch(`${upstream.apiUrl}/_localplane/fixtures`)).json()) as FixturesView;
});

afterAll(async () => {
  await upstream?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Headers of the connection to the proxy, not of the exchange. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

interface Seen {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * A client of the proxy that keeps what it got, and checks after each exchange that the file is a whole recording of
 * all of them.
 */
function clientOf(recorder: Recorder, out: string) {
  const seen: Seen[] = [];
  const send = async (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const response = await fetch(`${recorder.url}${path}`, {
      method,
      headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    const headers = Object.fromEntries([...response.headers].filter(([name]) => !HOP_BY_HOP.has(name)));
    seen.push({ method, path, status: response.status, headers, text });
    await recorder.settled();
    expect(recorder.exchanges).toBe(seen.length);
    expect(readRecording(out).entries).toHaveLength(seen.length);
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return { seen, send };
}

/** A recorded entry's headers as fetch shows them: names in lower case, repeats joined. */
const headersOf = (entry: HarEntry) => {
  const joined: Record<string, string> = {};
  for (const { name, value } of entry.response.headers)
    joined[name.toLowerCase()] =
      joined[name.toLowerCase()] === undefined ? value : `${joined[name.toLowerCase()]}, ${value}`;
  return joined;
};

describe('a recording of a scenario', () => {
  const out = join(dir, 'scenario.har');
  const acme = () => workspaceByTier(fixtures, 'plus');
  const globex = () => fixtures.workspaces.find((workspace) => workspace.self_hosted)!;
  const auth = (workspace: { id: string; api_key: string }) => ({
    'X-API-Key': workspace.api_key,
    'X-Tenant-Id': workspace.id,
  });
  const deploymentSecret = 'lp-record-deployment-secret-0001';
  const clientSecret = 'lp-record-client-secret-0001';
  let seen: Seen[];
  let secrets: string[];

  beforeAll(async () => {
    const recorder = await record({ upstream: upstream.apiUrl, out, port: 0 });
    const client = clientOf(recorder, out);
    seen = client.seen;
    const key = fullKey(fixtures);
    secrets = [key.secret_access_key, acme().api_key, globex().api_key, deploymentSecret, clientSecret];
    const send = async (status: number, method: string, path: string, body?: unknown, workspace = acme()) => {
      const answer = await client.send(method, path, { body, headers: auth(workspace) });
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      return answer.body;
    };
    const destination = await send(200, 'POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'recorded',
      config: {
        bucket_name: fixtures.objstore.buckets[0],
        prefix: 'recorded',
        endpoint_url: fixtures.objstore.endpoint_url,
      },
      credentials: credentialsOf(key),
    });
    const created = await send(200, 'POST', '/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.id,
      session_id: acme().sessions[0]!.id,
      start_time: '2026-10-02T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    await send(200, 'GET', `/api/v1/bulk-exports/${created.id}/runs`);
    await send(
      201,
      'POST',
      '/v2/deployments',
      codehostDeploymentBody(acme(), 'recorded-agent', {
        secrets: [{ name: 'OPENAI_API_KEY', value: deploymentSecret }],
      }),
    );
    await send(200, 'POST', '/v2/auth/providers', {
      provider_id: 'recorded-provider',
      name: 'Recorded',
      client_id: 'recorded-client',
      client_secret: clientSecret,
      auth_url: 'https://auth.example/authorize',
      token_url: 'https://auth.example/token',
    });
    await send(
      201,
      'POST',
      '/v2/listeners',
      { compute_type: 'k8s', compute_id: 'recorded-cluster', compute_config: { k8s_namespaces: ['agents'] } },
      globex(),
    );
    await send(200, 'GET', `/v2/deployments?name_contains=recorded&api_key=${acme().api_key}`);
    await send(404, 'GET', '/v2/deployments/00000000-0000-4000-8000-000000000000');
    await send(422, 'POST', '/v2/deployments', {
      ...codehostDeploymentBody(acme(), 'recorded-422'),
      source: 'bogus',
      secrets: [{ name: 'K', value: deploymentSecret }],
    });
    const built = await send(201, 'POST', '/v2/deployments', {
      name: 'recorded-image',
      source: 'internal_container',
      source_config: { deployment_type: 'dev' },
      source_revision_config: {},
      secrets: [],
    });
    secrets.push((await send(200, 'POST', `/v2/deployments/${built.id}/push-token`)).token);
    await recorder.stop();
  });

  it('holds each exchange in order, with the status, headers and body the client got', () => {
    const log = readRecording(out);
    expect(
      log.entries.map(
        (entry) => `${entry.request.method} ${new URL(entry.request.url).pathname} ${entry.response.status}`,
      ),
    ).toEqual(seen.map((exchange) => `${exchange.method} ${exchange.path.split('?')[0]} ${exchange.status}`));
    log.entries.forEach((entry, at) => {
      expect(headersOf(entry), seen[at]!.path).toEqual(seen[at]!.headers);
      const masked = (entry._masked ?? []).some((where) => where.startsWith('response.content'));
      if (!masked) expect(entry.response.content.text, seen[at]!.path).toBe(seen[at]!.text);
    });
    expect(log._localplane).toMatchObject({
      upstream: upstream.apiUrl,
      masking: {
        words: expect.arrayContaining(['password', 'token', 'cookie']),
        listed_names: expect.arrayContaining(['x-api-key']),
      },
    });
  });

  it('masks secrets in requests and answers, keeping their shape, and says what it masked', () => {
    const entries = readRecording(out).entries;
    const [destination, , , deployment, provider, , listed, , refused] = entries;
    expect(destination!._masked).toEqual(
      expect.arrayContaining(['request.headers.x-api-key', 'request.postData.credentials']),
    );
    expect(bodyJson(destination!.request.postData)).toMatchObject({
      credentials: { access_key_id: '********', secret_access_key: '********' },
    });
    // A secret's name labels it and is kept; its value is masked (the answer shows it masked already).
    expect(deployment!._masked).toEqual(['request.headers.x-api-key', 'request.postData.secrets']);
    expect(bodyJson(deployment!.request.postData)).toMatchObject({
      secrets: [{ name: 'OPENAI_API_KEY', value: '********' }],
    });
    expect(bodyJson(deployment!.response.content)).toEqual(JSON.parse(seen[3]!.text));
    expect(provider!._masked).toContain('request.postData.client_secret');
    expect(listed!._masked).toContain('request.queryString.api_key');
    expect(listed!.request.url).toBe(`${upstream.apiUrl}/v2/deployments?name_contains=recorded&api_key=********`);
    expect(listed!.request.queryString).toEqual([
      { name: 'name_contains', value: 'recorded' },
      { name: 'api_key', value: '********' },
    ]);
    expect(headerValue(refused!.request.headers, 'x-api-key')).toBe('********');
    const pushToken = entries.at(-1)!;
    expect(pushToken._masked).toContain('response.content.token');
    expect(bodyJson(pushToken.response.content)).toMatchObject({
      token: '********',
      registry_url: expect.stringMatching(/^https:\/\//),
    });
  });

  it('holds no secret the client sent or got, anywhere in the file', () => {
    const text = readFileSync(out, 'utf8');
    expect(secrets.filter((secret) => text.includes(secret))).toEqual([]);
  });
});

describe('relaying', () => {
  let recorder: Recorder;
  const out = join(dir, 'relay.har');
  beforeAll(async () => {
    recorder = await record({ upstream: upstream.apiUrl, out, port: 0 });
  });
  afterAll(() => recorder.stop());

  it.each(['/openapi.json', '/api/v1/bulk-exports/destinations', '/v2/nowhere'])(
    'answers %s byte for byte as the upstream does',
    async (path) => {
      const headers = { 'X-API-Key': workspaceByTier(fixtures, 'plus').api_key };
      const [direct, relayed] = await Promise.all([
        fetch(`${upstream.apiUrl}${path}`, { headers }),
        fetch(`${recorder.url}${path}`, { headers }),
      ]);
      expect(relayed.status).toBe(direct.status);
      expect(relayed.headers.get('content-type')).toBe(direct.headers.get('content-type'));
      expect(Buffer.from(await relayed.arrayBuffer()).equals(Buffer.from(await direct.arrayBuffer()))).toBe(true);
    },
  );

  it('passes a stream on as it comes: the first event reaches the client while the upstream still sends', async () => {
    const response = await fetch(`${recorder.url}/_localplane/requests/stream?since=0`);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = new EventStreamReader(response.body!);
    const [event] = await reader.events(1);
    await reader.cancel();
    await recorder.settled();
    const entry = readRecording(out).entries.find((recorded) => recorded.request.url.includes('/requests/stream'))!;
    expect(entry.comment).toBe('the client closed the connection before the answer ended');
    // The event is masked as any answer is (the journal entry it carries quotes an `authorization` header): the same
    // entry.
    const { id, path } = JSON.parse(event!.data!) as { id: number; path: string };
    expect(JSON.parse(/^data: (.*)$/m.exec(entry.response.content.text!)![1]!)).toMatchObject({ id, path });
  });

  it('ends the streams under way when it stops, and records them as cut by it', async () => {
    const stopping = await record({ upstream: upstream.apiUrl, out: join(dir, 'stopped.har'), port: 0 });
    const reader = new EventStreamReader((await fetch(`${stopping.url}/_localplane/requests/stream?since=0`)).body!);
    await reader.events(1);
    await stopping.stop();
    // The client's stream ends (cut): what was buffered is read, then nothing more comes.
    while ((await reader.next().catch(() => null)) !== null);
    const [entry] = readRecording(join(dir, 'stopped.har')).entries;
    expect(entry).toMatchObject({
      response: { status: 200 },
      comment: 'the recording stopped before the answer ended',
    });
  });

  it('sends requests under an upstream with a path to that path', async () => {
    const prefixed = await record({
      upstream: `${upstream.apiUrl}/_localplane/`,
      out: join(dir, 'prefixed.har'),
      port: 0,
    });
    const response = await fetch(`${prefixed.url}/health`);
    await prefixed.stop();
    expect(response.status).toBe(200);
    expect(readRecording(join(dir, 'prefixed.har')).entries.map((entry) => entry.request.url)).toEqual([
      `${upstream.apiUrl}/_localplane/health`,
    ]);
  });
});

describe('answers the masking reads decoded, and bodies over the limit', () => {
  let server: Server;
  const big = 'x'.repeat(RECORDED_BODY_LIMIT + 4096);
  beforeAll(async () => {
    server = createHttpServer((request, response) => {
      if (request.url === '/gzip') {
        response
          .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
          .end(gzipSync(JSON.stringify({ client_secret: 'lp-gzipped-secret', ok: true })));
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' }).end(big);
      }
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  });
  afterAll(() => new Promise((closed) => server.close(closed)));

  it('keeps a gzipped answer decoded and masked, and the first part of a long one', async () => {
    const out = join(dir, 'bodies.har');
    const recorder = await record({
      upstream: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      out,
      port: 0,
    });
    expect(await (await fetch(`${recorder.url}/gzip`)).json()).toEqual({
      client_secret: 'lp-gzipped-secret',
      ok: true,
    });
    expect(await (await fetch(`${recorder.url}/big`)).text()).toBe(big);
    await recorder.stop();
    const [gzipped, long] = readRecording(out).entries;
    expect(bodyJson(gzipped!.response.content)).toEqual({ client_secret: '********', ok: true });
    expect(gzipped!._masked).toEqual(['response.content.client_secret']);
    expect(long!.response.content).toMatchObject({ size: big.length, _truncated: true });
    expect(long!.response.content.text).toHaveLength(RECORDED_BODY_LIMIT);
    expect(readFileSync(out, 'utf8')).not.toContain('lp-gzipped-secret');
  });
});

describe('bad upstreams', () => {
  /**
   * Records one GET through a proxy in front of `upstream`, and answers what the client got and what the file holds.
   */
  async function throughProxy(base: string, options: { upstreamTimeoutSeconds?: number } = {}) {
    const out = join(dir, `bad-${Math.random().toString(36).slice(2)}.har`);
    const recorder = await record({ upstream: base, out, port: 0, ...options });
    const response = await fetch(`${recorder.url}/v2/deployments`);
    const body = (await response.json()) as { detail: string };
    await recorder.stop();
    const [entry] = readRecording(out).entries;
    expect(entry!.response.status).toBe(502);
    expect(entry!._error).toBe(body.detail);
    expect(bodyJson(entry!.response.content)).toEqual(body);
    return { status: response.status, detail: body.detail };
  }

  it('answers 502 naming an upstream that refuses the connection', async () => {
    const closed = createTcpServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const { port } = closed.address() as { port: number };
    await new Promise((done) => closed.close(done));
    expect(await throughProxy(`http://127.0.0.1:${port}`)).toEqual({
      status: 502,
      detail: `upstream http://127.0.0.1:${port} unreachable: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  it('answers 502 for an upstream whose TLS fails', async () => {
    const port = new URL(upstream.apiUrl).port;
    const { detail } = await throughProxy(`https://127.0.0.1:${port}`);
    expect(detail).toMatch(new RegExp(`^upstream https://127\\.0\\.0\\.1:${port} TLS error: `));
  });

  it('answers 502 for an upstream that does not answer within --upstream-timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const { port } = silent.address() as { port: number };
    try {
      expect(await throughProxy(`http://127.0.0.1:${port}`, { upstreamTimeoutSeconds: 0.2 })).toEqual({
        status: 502,
        detail: `upstream http://127.0.0.1:${port} did not answer within 0.2 s`,
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => silent.close(done));
    }
  });

  it('records a request whose client went away before any answer with status 0', async () => {
    const silent = createTcpServer();
    const connected = new Promise<Socket>((resolve) => silent.once('connection', resolve));
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const out = join(dir, 'gone.har');
    const recorder = await record({
      upstream: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
      out,
      port: 0,
    });
    const leaving = new AbortController();
    const sent = fetch(`${recorder.url}/v2/deployments`, { signal: leaving.signal }).catch((error: unknown) => error);
    const socket = await connected;
    leaving.abort();
    await sent;
    await recorder.settled();
    expect(readRecording(out).entries).toMatchObject([
      {
        response: { status: 0, content: { size: 0 } },
        comment: 'the client closed the connection before the answer ended',
      },
    ]);
    await recorder.stop();
    socket.destroy();
    await new Promise((done) => silent.close(done));
  });

  it.each([
    ['ftp://api.example', /must be an http:\/\/ or https:\/\/ URL/],
    ['https://api.example/?tenant=1', /without a query or fragment/],
    ['https://api.example/#top', /without a query or fragment/],
    ['https://user:pass@api.example', /must not hold credentials/],
  ])('refuses the upstream %s', async (base, words) => {
    const refused = await record({ upstream: base, out: join(dir, 'refused.har'), port: 0 }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(RecordOptionError);
    expect((refused as Error).message).toMatch(words);
  });
});

describe('localplane record (the CLI)', () => {
  it('prints its ready line, records, and leaves a whole file on SIGINT', async () => {
    const out = join(dir, 'cli.har');
    const child = spawn(process.execPath, [BIN, 'record', '--upstream', upstream.apiUrl, '--out', out, '--port', '0'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stdout = '';
    const proxy = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const ready = /^localplane record ready proxy=(\S+) upstream=(\S+) out=(\S+)\n$/.exec(stdout);
        if (ready) resolve(ready[1]!);
      });
      void exited.then((code) => reject(new Error(`exited (${code}) before it was ready`)));
    });
    expect(stdout).toBe(`localplane record ready proxy=${proxy} upstream=${upstream.apiUrl} out=${out}\n`);
    expect((await fetch(`${proxy}/_localplane/health`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(readRecording(out).entries.map((entry) => entry.response.status)).toEqual([200]);
  });

  it.each([
    [['record', '--out', 'x.har'], /^localplane: record needs --upstream <url> and --out <file>/],
    [
      ['record', '--upstream', 'http://localhost:9400/?a=1', '--out', 'x.har', '--port', '0'],
      /^localplane: the upstream must be a base URL without a query or fragment/,
    ],
    [
      ['record', '--upstream', 'http://localhost:9400', '--out', '/no/such/folder/x.har', '--port', '0'],
      /^localplane: cannot write the recording \/no\/such\/folder\/x\.har: ENOENT/,
    ],
    [
      ['record', '--upstream', 'http://localhost:9400', '--out', 'x.har', '--seed', '2'],
      /^localplane: --seed is not an option of localplane record/,
    ],
  ])('%j: a usage error', async (args, words) => {
    await expectUsageError(args, words);
  });
});
