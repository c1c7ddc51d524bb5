import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CopyObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../../src/index.ts';
import { EventStreamReader } from '../support/event-stream.ts';
import { eventually, type FixturesView, type FixtureWorkspace } from '../support/instance.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

/**
 * A full scenario sends secrets every way the API takes them (destination credentials and
 * their rotation with session tokens, deployment secrets, objstore keys added at run time,
 * wrong secrets, secrets of the wrong JSON type), then every response body and header, every
 * admin endpoint, the objstore journal, the stored objects and the process output are searched
 * for them. Every secret holds MARKER and nothing else sent does, so a partial echo (a JSON
 * error quoting ten characters of the body) is caught as well as a whole one.
 */
const MARKER = 'LEAKCHECK';
const secret = (n: number, what: string) => `${MARKER}-${n}-${what}`;

const SECRETS = {
  runtimeKey: secret(1, 'objstore-secret-of-a-runtime-key'),
  rotatedKey: secret(2, 'objstore-secret-of-the-rotated-key'),
  revokedKey: secret(3, 'objstore-secret-of-a-key-revoked-later'),
  duplicateKey: secret(4, 'objstore-secret-of-a-key-id-taken'),
  sessionToken: secret(5, 'session-token'),
  rotatedSessionToken: secret(6, 'session-token-after-rotation'),
  wrongSecret: secret(7, 'wrong-secret-of-a-known-key'),
  unknownKeySecret: secret(8, 'secret-of-an-unknown-key'),
  wrongRotationSecret: secret(9, 'wrong-secret-in-a-rotation'),
  deploymentSecret: secret(10, 'deployment-secret'),
  containerSecret: secret(11, 'external-container-secret'),
  patchedSecret: secret(12, 'deployment-secret-after-patch'),
  conflictSecret: secret(13, 'secret-of-a-409-create'),
  sourceErrorSecret: secret(14, 'secret-of-a-400-create'),
  otherFieldSecret: secret(15, 'secret-beside-a-422-field'),
  badDisplayNameSecret: secret(16, 'credentials-beside-a-422-field'),
  unknownDeploymentSecret: secret(17, 'secret-of-a-404-patch'),
  objstoreKeyOtherField: secret(18, 'objstore-secret-beside-a-422-field'),
  unknownApiKey: secret(19, 'api-key-of-no-workspace'),
  clientSecret: secret(33, 'oauth-client-secret'),
  rotatedClientSecret: secret(34, 'oauth-client-secret-after-patch'),
  conflictClientSecret: secret(35, 'oauth-client-secret-of-a-409-create'),
};

/** Secrets sent with the wrong JSON type: the 422 must not echo them as its `input`. */
const WRONG_TYPE = {
  credentialsString: secret(20, 'credentials-as-a-string'),
  secretList: secret(21, 'secret-access-key-as-a-list'),
  sessionTokenObject: secret(22, 'session-token-as-an-object'),
  secretsObject: secret(23, 'secrets-as-an-object'),
  secretValueObject: secret(24, 'secret-value-as-an-object'),
  secretsString: secret(25, 'secrets-as-a-string'),
  objstoreSecretList: secret(26, 'objstore-secret-as-a-list'),
  clientSecretList: secret(36, 'oauth-client-secret-as-a-list'),
};

/** Secrets of the right type but over the length limit: a 422 `string_too_long`. */
const TOO_LONG = {
  secretAccessKey: `${secret(27, 'secret-access-key-too-long-')}${'x'.repeat(2100)}`,
  sessionToken: `${secret(28, 'session-token-too-long-')}${'x'.repeat(2100)}`,
  objstoreSecret: `${secret(29, 'objstore-secret-too-long-')}${'x'.repeat(2100)}`,
};

/** Bodies that are not JSON, around a secret: a 422 `json_invalid`. */
const NOT_JSON = [
  `{"display_name": "x", "credentials": ${secret(30, 'unquoted')}}`,
  `{"credentials": {"access_key_id": "LPLEAKKEY0001", "secret_access_key": "${secret(31, 'unterminated')}`,
  `${secret(32, 'the-whole-body')}`,
];

/** SSE-C keys (32 bytes) in base64, as the SDK takes them and their headers carry them (the marker is base64 text). */
const CUSTOMER_KEYS = {
  object: 'LEAKCHECK37SSEcustomerKeyOfAnObject0000000A=',
  copySource: 'LEAKCHECK38SSEcustomerKeyOfCopySource00000A=',
};

const ALL_SECRETS = [
  ...Object.values(SECRETS),
  ...Object.values(WRONG_TYPE),
  ...Object.values(TOO_LONG),
  ...Object.values(CUSTOMER_KEYS),
];
const NOW = '2026-10-04T12:00:00Z';

type Phase = 'scenario' | 'wrong-type' | 'too-long' | 'not-json' | 'admin';

interface Exchange {
  phase: Phase;
  request: string;
  status: number;
  headers: string;
  body: string;
}

/** Where a secret, or a piece of one, shows: the marker with its surroundings. */
function leaksIn(where: string, text: string): string[] {
  const hits = ALL_SECRETS.filter((value) => text.includes(value)).map(
    (value) => `${where}: the whole secret ${value.slice(0, 60)}`,
  );
  for (let at = text.indexOf(MARKER); at !== -1; at = text.indexOf(MARKER, at + 1)) {
    hits.push(`${where}: ...${text.slice(Math.max(0, at - 60), at + 60)}...`);
  }
  return hits;
}

const exchangeLeaks = (exchanges: readonly Exchange[]) =>
  exchanges.flatMap((exchange) => [
    ...leaksIn(`${exchange.request} -> ${exchange.status} body`, exchange.body),
    ...leaksIn(`${exchange.request} -> ${exchange.status} headers`, exchange.headers),
  ]);

// --- a localplane to watch --------------------------------------------------------------

interface Target {
  apiUrl: string;
  /** Everything it printed or logged, complete once stopped. */
  output(): string;
  stop(): Promise<void>;
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const START_ARGS = ['--port', '0', '--objstore-port', '0', '--freeze-clock'];

/** The compiled CLI in a child process (what `npx localplane start` runs), its stdout and stderr captured. */
async function startCli(dataDir: string): Promise<Target> {
  if (!existsSync(join(REPO, 'dist', 'cli.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm test does it first)');
  const child = spawn(
    process.execPath,
    [join(REPO, 'bin', 'localplane.js'), 'start', ...START_ARGS, '--data-dir', dataDir],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const apiUrl = /^localplane ready api=(\S+) objstore=\S+$/m.exec(output)?.[1];
      if (apiUrl) resolve(apiUrl);
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`localplane exited with ${code} before it was ready:\n${output}`)));
  });
  return {
    apiUrl: await ready,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An instance in this process, its `log` lines captured. */
async function startInProcess(dataDir: string): Promise<Target> {
  const lines: string[] = [];
  const instance = await start({
    port: 0,
    objstorePort: 0,
    freezeClock: true,
    dataDir,
    log: (line) => lines.push(line),
  });
  return { apiUrl: instance.apiUrl, output: () => lines.join('\n'), stop: () => instance.stop() };
}

// --- the scenario -----------------------------------------------------------------------

/** Sends requests and keeps every answer, tagged with the phase it belongs to. */
class Recorder {
  readonly exchanges: Exchange[] = [];
  phase: Phase = 'scenario';

  constructor(private readonly apiUrl: string) {}

  async send(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ) {
    const text = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const response = await fetch(`${this.apiUrl}${path}`, {
      method,
      headers: { ...options.headers, ...(text === undefined ? {} : { 'content-type': 'application/json' }) },
      body: text,
    });
    const body = await response.text();
    this.exchanges.push({
      phase: this.phase,
      request: `${method} ${path}`,
      status: response.status,
      headers: [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n'),
      body,
    });
    return { status: response.status, body: body ? JSON.parse(body) : undefined };
  }

  /** An event stream read until the event with id `lastId` (it never ends by itself), recorded as its events' data. */
  async readStream(path: string, lastId: number) {
    const response = await fetch(`${this.apiUrl}${path}`);
    const reader = new EventStreamReader(response.body!);
    const data: string[] = [];
    for (
      let event = await reader.next();
      event !== null;
      event = event.id === String(lastId) ? null : await reader.next()
    ) {
      if (event.data !== undefined) data.push(event.data);
    }
    await reader.cancel();
    const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
    this.exchanges.push({
      phase: this.phase,
      request: `GET ${path}`,
      status: response.status,
      headers,
      body: data.join('\n'),
    });
    return data;
  }

  as(workspace: FixtureWorkspace) {
    const auth = { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id };
    return (method: string, path: string, body?: unknown, raw?: string) =>
      this.send(method, path, { body, raw, headers: auth });
  }

  admin(method: string, path: string, body?: unknown) {
    return this.send(method, `/_localplane${path}`, { body });
  }
}

const KEY_IDS = {
  runtime: 'LPLEAKKEY0001',
  rotated: 'LPLEAKKEY0002',
  revoked: 'LPLEAKKEY0003',
  unknown: 'LPLEAKNOSUCHKEY9',
};
const ALL_PERMISSIONS = ['create', 'delete', 'get', 'multipart'];
const FOLDER_KEY = 'leak-check/folder/';

async function runScenario(recorder: Recorder, fixtures: FixturesView, snapshotPath: string) {
  const acmeWorkspace = fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
  const globexWorkspace = fixtures.workspaces.find((workspace) => workspace.self_hosted)!;
  const acme = recorder.as(acmeWorkspace);
  const globex = recorder.as(globexWorkspace);
  const expectStatus = async <T>(sent: Promise<{ status: number; body: T }>, status: number) => {
    const response = await sent;
    expect(response.status, JSON.stringify(response.body)?.slice(0, 300)).toBe(status);
    return response.body;
  };
  const admin = (method: string, path: string, body?: unknown) => recorder.admin(method, path, body);

  expect((await admin('POST', '/clock/set', { time: NOW })).status).toBe(200);

  // API keys of no workspace, alone and joined to a real one.
  for (const apiKey of [SECRETS.unknownApiKey, `${acmeWorkspace.api_key}, ${SECRETS.unknownApiKey}`]) {
    for (const [method, path] of [
      ['GET', '/v2/deployments'],
      ['GET', '/api/v1/bulk-exports/destinations'],
      ['POST', '/api/v1/bulk-exports'],
    ]) {
      await expectStatus(
        recorder.send(method!, path!, {
          headers: { 'X-API-Key': apiKey, 'X-Tenant-Id': acmeWorkspace.id },
          body: method === 'POST' ? {} : undefined,
        }),
        401,
      );
    }
  }

  // Objstore keys added at run time, and one whose id is taken.
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: KEY_IDS.runtime,
      secret_access_key: SECRETS.runtimeKey,
      permissions: ALL_PERMISSIONS,
    }),
    201,
  );
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: KEY_IDS.rotated,
      secret_access_key: SECRETS.rotatedKey,
      permissions: ALL_PERMISSIONS,
    }),
    201,
  );
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: KEY_IDS.revoked,
      secret_access_key: SECRETS.revokedKey,
      permissions: ALL_PERMISSIONS,
    }),
    201,
  );
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: KEY_IDS.runtime,
      secret_access_key: SECRETS.duplicateKey,
      permissions: ALL_PERMISSIONS,
    }),
    409,
  );
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: '',
      secret_access_key: SECRETS.objstoreKeyOtherField,
      permissions: ALL_PERMISSIONS,
    }),
    422,
  );

  // Destinations: created with a session token, refused with wrong secrets, rotated.
  const config = {
    bucket_name: fixtures.objstore.buckets[0],
    prefix: 'leak-check',
    endpoint_url: fixtures.objstore.endpoint_url,
  };
  const credentials = (accessKeyId: string, secretAccessKey: string, sessionToken?: string) => ({
    access_key_id: accessKeyId,
    secret_access_key: secretAccessKey,
    ...(sessionToken ? { session_token: sessionToken } : {}),
  });
  const destination = await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'leak check',
      config,
      credentials: credentials(KEY_IDS.runtime, SECRETS.runtimeKey, SECRETS.sessionToken),
    }),
    200,
  );
  expect(destination.credentials_keys).toEqual(['access_key_id', 'secret_access_key', 'session_token']);
  const refused = await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'wrong secret',
      config,
      credentials: credentials(KEY_IDS.runtime, SECRETS.wrongSecret),
    }),
    400,
  );
  expect(refused.detail).toMatch(/SignatureDoesNotMatch/);
  const unknownKey = await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'unknown key',
      config,
      credentials: credentials(KEY_IDS.unknown, SECRETS.unknownKeySecret),
    }),
    400,
  );
  expect(unknownKey.detail).toMatch(/InvalidAccessKeyId/);
  await expectStatus(
    acme('PATCH', `/api/v1/bulk-exports/destinations/${destination.id}`, {
      credentials: credentials(KEY_IDS.rotated, SECRETS.wrongRotationSecret),
    }),
    400,
  );
  await expectStatus(
    acme('PATCH', `/api/v1/bulk-exports/destinations/${destination.id}`, {
      credentials: credentials(KEY_IDS.rotated, SECRETS.rotatedKey, SECRETS.rotatedSessionToken),
    }),
    200,
  );
  await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: '!!',
      config,
      credentials: credentials(KEY_IDS.runtime, SECRETS.badDisplayNameSecret),
    }),
    422,
  );
  await expectStatus(acme('GET', `/api/v1/bulk-exports/destinations/${destination.id}`), 200);
  await expectStatus(acme('GET', '/api/v1/bulk-exports/destinations'), 200);

  // The runtime key straight over S3, with a session token: right, then with a wrong secret. A
  // key ending in `/` has no plain file, which makes the log line that shows the output is captured.
  const s3 = (secretAccessKey: string) =>
    new S3Client({
      endpoint: fixtures.objstore.endpoint_url,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: KEY_IDS.runtime, secretAccessKey, sessionToken: SECRETS.sessionToken },
    });
  const signed = s3(SECRETS.runtimeKey);
  await signed.send(new PutObjectCommand({ Bucket: config.bucket_name, Key: FOLDER_KEY, Body: '' }));
  // SSE-C: an object encrypted with a customer key, copied with it as the source's key, read with it wrongly signed.
  const customerKey = (key: string) => ({ SSECustomerAlgorithm: 'AES256', SSECustomerKey: key });
  await signed.send(
    new PutObjectCommand({
      Bucket: config.bucket_name,
      Key: 'leak-check/sse-c',
      Body: 'encrypted',
      ...customerKey(CUSTOMER_KEYS.copySource),
    }),
  );
  await signed.send(
    new CopyObjectCommand({
      Bucket: config.bucket_name,
      Key: 'leak-check/sse-c-copy',
      CopySource: `${config.bucket_name}/leak-check/sse-c`,
      CopySourceSSECustomerAlgorithm: 'AES256',
      CopySourceSSECustomerKey: CUSTOMER_KEYS.copySource,
      ...customerKey(CUSTOMER_KEYS.object),
    }),
  );
  signed.destroy();
  const wronglySigned = s3(SECRETS.wrongSecret);
  await expect(
    wronglySigned.send(new GetObjectCommand({ Bucket: config.bucket_name, Key: FOLDER_KEY })),
  ).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
  await expect(
    wronglySigned.send(
      new GetObjectCommand({
        Bucket: config.bucket_name,
        Key: 'leak-check/sse-c-copy',
        ...customerKey(CUSTOMER_KEYS.object),
      }),
    ),
  ).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
  wronglySigned.destroy();

  // Exports, one-time and recurring, on the rotated pair.
  const session = acmeWorkspace.sessions.find((candidate) => candidate.run_count < 50_000)!;
  const exportOn = (destinationId: string, window: Record<string, unknown>) =>
    expectStatus(
      acme('POST', '/api/v1/bulk-exports', {
        bulk_export_destination_id: destinationId,
        session_id: session.id,
        format_version: 'v2_beta',
        ...window,
      }),
      200,
    );
  // The clock is frozen, so nothing starts by itself: each poll runs what is due now.
  const runDue = () => expectStatus(admin('POST', '/clock/advance', { seconds: 0 }), 200);
  const finished = (id: string) =>
    eventually(async () => {
      await runDue();
      const current = await acme('GET', `/api/v1/bulk-exports/${id}`);
      return isTerminalStatus(current.body.status) ? current.body : undefined;
    }, `export ${id}`);
  const oneTime = await exportOn(destination.id, {
    start_time: '2026-10-02T00:00:00Z',
    end_time: '2026-10-03T00:00:00Z',
  });
  expect((await finished(oneTime.id)).status).toBe('Completed');
  const runs = await expectStatus(acme('GET', `/api/v1/bulk-exports/${oneTime.id}/runs`), 200);
  expect(runs[0].metadata.result.rows_written).toBeGreaterThan(0);
  await expectStatus(acme('GET', `/api/v1/bulk-exports/${oneTime.id}/runs/${runs[0].id}`), 200);
  // Read back through the admin API: SQL over its files, a preview of one.
  await expectStatus(admin('POST', '/sql', { export_id: oneTime.id, sql: 'SELECT * FROM runs LIMIT 5' }), 200);
  const [exportedFile] = runs[0].metadata.result.exported_files as string[];
  const previewKey = exportedFile!.slice(config.bucket_name.length + 1);
  await expectStatus(
    admin('GET', `/objstore/preview?${new URLSearchParams({ bucket: config.bucket_name, key: previewKey })}`),
    200,
  );
  const recurring = await exportOn(destination.id, { start_time: '2026-10-03T00:00:00Z', interval_hours: 24 });
  const children = await eventually(async () => {
    await runDue();
    const listed = (await acme('GET', '/api/v1/bulk-exports')).body as {
      id: string;
      status: string;
      source_bulk_export_id: string | null;
    }[];
    const child = listed.find((item) => item.source_bulk_export_id === recurring.id);
    return child && child.status === 'Completed' ? [child] : undefined;
  }, 'the child of the recurring export');
  expect(children).toHaveLength(1);
  await expectStatus(acme('GET', `/api/v1/bulk-exports/runs?source_bulk_export_id=${recurring.id}`), 200);
  await expectStatus(acme('PATCH', `/api/v1/bulk-exports/${recurring.id}`, { status: 'Cancelled' }), 200);

  // A key revoked under a destination: its export fails, with the store's words in the run's errors.
  const doomed = await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'revoked later',
      config,
      credentials: credentials(KEY_IDS.revoked, SECRETS.revokedKey),
    }),
    200,
  );
  await expectStatus(admin('DELETE', `/objstore/keys/${KEY_IDS.revoked}`), 204);
  await expectStatus(admin('PATCH', '/config', { export_run_max_retries: 0 }), 200);
  const failing = await exportOn(doomed.id, { start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-03T00:00:00Z' });
  expect((await finished(failing.id)).status).toBe('Failed');
  const failedRuns = await expectStatus(acme('GET', `/api/v1/bulk-exports/${failing.id}/runs`), 200);
  expect(JSON.stringify(failedRuns[0].errors)).toMatch(/InvalidAccessKeyId/);
  await expectStatus(acme('GET', '/api/v1/bulk-exports'), 200);

  // Deployments with secrets and secret_references; a patch with new secrets; a redeploy.
  const integration = acmeWorkspace.integrations[0]!;
  const codehost = {
    name: 'leak-check-agent',
    source: 'codehost',
    source_config: { integration_id: integration.id, repo_url: integration.repos[0]!.url, deployment_type: 'dev' },
    source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
    secrets: [{ name: 'OPENAI_API_KEY', value: SECRETS.deploymentSecret }],
  };
  const deployment = await expectStatus(acme('POST', '/v2/deployments', codehost), 201);
  expect(deployment.secrets).toEqual([{ name: 'OPENAI_API_KEY', value: '********' }]);
  const container = await expectStatus(
    globex('POST', '/v2/deployments', {
      name: 'leak-check-container',
      source: 'external_container',
      source_config: { listener_id: globexWorkspace.listeners[0], listener_config: { k8s_namespace: 'agents' } },
      source_revision_config: { image_uri: 'registry.example/agent:1' },
      secrets: [{ name: 'DB_PASSWORD', value: SECRETS.containerSecret }],
      secret_references: [{ name: 'DB_URL', secret_name: 'db', secret_key: 'url' }],
    }),
    201,
  );
  const patched = await expectStatus(
    acme('PATCH', `/v2/deployments/${deployment.id}`, {
      secrets: [{ name: 'OPENAI_API_KEY', value: SECRETS.patchedSecret }],
    }),
    200,
  );
  expect(patched.latest_revision_id).not.toBe(deployment.latest_revision_id);
  await expectStatus(
    globex('PATCH', `/v2/deployments/${container.id}`, {
      secrets: [{ name: 'DB_PASSWORD', value: SECRETS.patchedSecret }],
    }),
    200,
  );
  const redeployed = await expectStatus(
    acme('POST', `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}/redeploy`),
    200,
  );
  await expectStatus(admin('POST', '/clock/advance', { seconds: 10 }), 200);
  const revision = await expectStatus(
    acme('GET', `/v2/deployments/${deployment.id}/revisions/${redeployed.latest_revision_id}`),
    200,
  );
  expect(revision.status).toBe('DEPLOYED');
  await expectStatus(acme('GET', `/v2/deployments/${deployment.id}/revisions`), 200);
  await expectStatus(acme('GET', `/v2/deployments/${deployment.id}`), 200);
  await expectStatus(acme('GET', '/v2/deployments?name_contains=leak-check'), 200);
  await expectStatus(globex('GET', `/v2/deployments/${container.id}`), 200);
  await expectStatus(admin('PUT', `/deployments/${container.id}/status`, { status: 'READY' }), 200);
  await expectStatus(
    acme('POST', '/v2/deployments', {
      ...codehost,
      secrets: [{ name: 'OPENAI_API_KEY', value: SECRETS.conflictSecret }],
    }),
    409,
  );
  await expectStatus(
    acme('POST', '/v2/deployments', {
      ...codehost,
      name: 'leak-check-400',
      source: 'external_container',
      secrets: [{ name: 'K', value: SECRETS.sourceErrorSecret }],
    }),
    400,
  );
  await expectStatus(
    acme('POST', '/v2/deployments', {
      ...codehost,
      source: 'bogus',
      secrets: [{ name: 'K', value: SECRETS.otherFieldSecret }],
    }),
    422,
  );
  await expectStatus(
    acme('PATCH', '/v2/deployments/00000000-0000-4000-8000-000000000000', {
      secrets: [{ name: 'K', value: SECRETS.unknownDeploymentSecret }],
    }),
    404,
  );
  await expectStatus(acme('DELETE', `/v2/deployments/${deployment.id}`), 204);

  // OAuth providers: client_secret is write-only, on create and on patch, and in a refused create.
  const provider = {
    provider_id: 'leak-check-provider',
    name: 'Leak check',
    client_id: 'leak-check-client',
    client_secret: SECRETS.clientSecret,
    auth_url: 'https://leak.example/authorize',
    token_url: 'https://leak.example/token',
  };
  const createdProvider = await expectStatus(acme('POST', '/v2/auth/providers', provider), 200);
  expect(createdProvider).not.toHaveProperty('client_secret');
  await expectStatus(
    acme('PATCH', '/v2/auth/providers/leak-check-provider', { client_secret: SECRETS.rotatedClientSecret }),
    200,
  );
  await expectStatus(
    acme('POST', '/v2/auth/providers', { ...provider, client_secret: SECRETS.conflictClientSecret }),
    409,
  );
  await expectStatus(acme('GET', '/v2/auth/providers/leak-check-provider'), 200);
  await expectStatus(acme('GET', '/v2/auth/providers'), 200);

  // Secrets of the wrong JSON type.
  recorder.phase = 'wrong-type';
  await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'wrong type',
      config,
      credentials: WRONG_TYPE.credentialsString,
    }),
    422,
  );
  await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'wrong type',
      config,
      credentials: { access_key_id: KEY_IDS.runtime, secret_access_key: [WRONG_TYPE.secretList] },
    }),
    422,
  );
  await expectStatus(
    acme('PATCH', `/api/v1/bulk-exports/destinations/${destination.id}`, {
      credentials: {
        ...credentials(KEY_IDS.rotated, 'lp-not-a-secret'),
        session_token: { token: WRONG_TYPE.sessionTokenObject },
      },
    }),
    422,
  );
  await expectStatus(
    acme('POST', '/v2/deployments', {
      ...codehost,
      name: 'leak-check-wrong-type',
      secrets: { OPENAI_API_KEY: WRONG_TYPE.secretsObject },
    }),
    422,
  );
  await expectStatus(
    globex('PATCH', `/v2/deployments/${container.id}`, {
      secrets: [{ name: 'DB_PASSWORD', value: { value: WRONG_TYPE.secretValueObject } }],
    }),
    422,
  );
  await expectStatus(globex('PATCH', `/v2/deployments/${container.id}`, { secrets: WRONG_TYPE.secretsString }), 422);
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: 'LPLEAKKEY0005',
      secret_access_key: [WRONG_TYPE.objstoreSecretList],
      permissions: ALL_PERMISSIONS,
    }),
    422,
  );
  await expectStatus(
    acme('PATCH', '/v2/auth/providers/leak-check-provider', { client_secret: [WRONG_TYPE.clientSecretList] }),
    422,
  );

  // Secrets over the length limit.
  recorder.phase = 'too-long';
  await expectStatus(
    acme('POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'too long',
      config,
      credentials: credentials(KEY_IDS.runtime, TOO_LONG.secretAccessKey),
    }),
    422,
  );
  await expectStatus(
    acme('PATCH', `/api/v1/bulk-exports/destinations/${destination.id}`, {
      credentials: credentials(KEY_IDS.rotated, SECRETS.rotatedKey, TOO_LONG.sessionToken),
    }),
    422,
  );
  await expectStatus(
    admin('POST', '/objstore/keys', {
      access_key_id: 'LPLEAKKEY0006',
      secret_access_key: TOO_LONG.objstoreSecret,
      permissions: ALL_PERMISSIONS,
    }),
    422,
  );

  // Bodies that are not JSON.
  recorder.phase = 'not-json';
  for (const raw of NOT_JSON) {
    await expectStatus(acme('POST', '/api/v1/bulk-exports/destinations', undefined, raw), 422);
    await expectStatus(globex('PATCH', `/v2/deployments/${container.id}`, undefined, raw), 422);
  }

  // Every admin endpoint that reads state, found in the instance's own OpenAPI document (every module's routes).
  recorder.phase = 'admin';
  for (const path of adminReadPaths(await expectStatus(recorder.send('GET', '/openapi.json'), 200)))
    await expectStatus(admin('GET', path), 200);
  await expectStatus(admin('GET', `/state?workspace_id=${acmeWorkspace.id}`), 200);
  await expectStatus(admin('POST', '/requests/find', {}), 200);
  const [latest] = (await expectStatus(admin('GET', '/requests?order=desc&limit=1'), 200)).requests;
  await recorder.readStream('/_localplane/requests/stream?since=0', latest.id);
  await expectStatus(admin('POST', '/snapshot', { name: basename(snapshotPath) }), 200);
}

/**
 * The admin GETs that answer JSON and need no path or query parameter (the preview, which does, is read in the
 * scenario; an event stream never ends: it sends the entries GET /requests answers).
 */
function adminReadPaths(document: {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; required?: boolean }[];
        responses?: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
}): string[] {
  return Object.entries(document.paths)
    .filter(
      ([path, operations]) =>
        path.startsWith('/_localplane/') &&
        !path.includes('{') &&
        operations.get?.responses?.['200']?.content?.['application/json'] !== undefined,
    )
    .filter(
      ([, operations]) =>
        !operations.get!.parameters?.some((parameter) => parameter.in === 'query' && parameter.required),
    )
    .map(([path]) => path.slice('/_localplane'.length));
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const TARGETS = [
  ['the CLI as a child process', startCli],
  ['an instance started in this process', startInProcess],
] as const;

describe.each(TARGETS)('no secret shows anywhere after a full scenario, on %s', (_name, launch) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'localplane-leak-check-'));
  let recorder: Recorder;
  let output = '';
  let files: { path: string; content: string }[] = [];
  // In the snapshots folder's default place.
  const snapshotPath = join(dataDir, 'snapshots', 'leak-check.snapshot');

  beforeAll(async () => {
    const target = await launch(dataDir);
    try {
      recorder = new Recorder(target.apiUrl);
      const fixtures = (await recorder.admin('GET', '/fixtures')).body as FixturesView;
      await runScenario(recorder, fixtures, snapshotPath);
      files = filesUnder(fixtures.objstore.files_dir).map((path) => ({ path, content: readFileSync(path, 'latin1') }));
    } finally {
      await target.stop();
      output = target.output();
    }
  }, 180_000);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const phase = (name: Phase) => recorder.exchanges.filter((exchange) => exchange.phase === name);

  it('in any response body or header of the scenario', () => {
    expect(phase('scenario').length).toBeGreaterThan(40);
    expect(exchangeLeaks(phase('scenario'))).toEqual([]);
  });

  it('in the 422 answers to secrets of the wrong JSON type', () => {
    expect(phase('wrong-type').map((exchange) => exchange.status)).toEqual(Object.values(WRONG_TYPE).map(() => 422));
    expect(exchangeLeaks(phase('wrong-type'))).toEqual([]);
  });

  it('in the 422 answers to secrets over the length limit', () => {
    expect(phase('too-long')).toHaveLength(Object.keys(TOO_LONG).length);
    expect(exchangeLeaks(phase('too-long'))).toEqual([]);
  });

  it('in the 422 answers to bodies that are not JSON', () => {
    expect(phase('not-json')).toHaveLength(2 * NOT_JSON.length);
    expect(exchangeLeaks(phase('not-json'))).toEqual([]);
  });

  it('in any admin endpoint, the objstore journal, the request journal (its stream too) and the keys included', () => {
    const read = phase('admin');
    const paths = [
      '/health',
      '/fixtures',
      '/tasks',
      '/faults',
      '/config',
      '/objstore/journal',
      '/objstore/keys',
      '/state',
      '/requests',
      '/requests/count',
      '/requests/stats',
      '/requests/stream?since=0',
      '/fault-rules',
    ];
    expect(read.map((exchange) => exchange.request)).toEqual(
      expect.arrayContaining([...paths.map((path) => `GET /_localplane${path}`), 'POST /_localplane/requests/find']),
    );
    expect(exchangeLeaks(read)).toEqual([]);
    const journal = JSON.parse(
      read.find((exchange) => exchange.request === 'GET /_localplane/objstore/journal')!.body,
    ) as { accessKeyId: string | null }[];
    expect(journal.map((record) => record.accessKeyId)).toEqual(
      expect.arrayContaining([KEY_IDS.runtime, KEY_IDS.rotated, KEY_IDS.revoked, KEY_IDS.unknown]),
    );
    // The request journal holds the whole scenario, bodies with secrets included (masked), from both servers.
    const requests = (
      JSON.parse(read.find((exchange) => exchange.request === 'POST /_localplane/requests/find')!.body) as {
        requests: { source: string; request: { body: { text: string | null } } }[];
      }
    ).requests;
    expect(requests.filter((entry) => entry.source === 'api').length).toBeGreaterThan(40);
    expect(requests.filter((entry) => entry.source === 'objstore').length).toBeGreaterThan(10);
    expect(
      requests.filter((entry) => entry.request.body.text?.includes('"credentials":"********"')).length,
    ).toBeGreaterThan(3);
    const streamed = read
      .find((exchange) => exchange.request === 'GET /_localplane/requests/stream?since=0')!
      .body.split('\n')
      .map((line) => JSON.parse(line));
    expect(streamed).toEqual(requests);
    const keys = JSON.parse(read.find((exchange) => exchange.request === 'GET /_localplane/objstore/keys')!.body) as {
      access_key_id: string;
    }[];
    expect(keys.map((key) => key.access_key_id)).toEqual(expect.arrayContaining([KEY_IDS.runtime, KEY_IDS.rotated]));
  });

  it('SSE-C keys in the snapshot file (which holds stored credentials, so only they are looked for)', () => {
    const snapshot = readFileSync(snapshotPath);
    expect(snapshot.length).toBeGreaterThan(0);
    for (const key of Object.values(CUSTOMER_KEYS)) {
      expect(snapshot.includes(key)).toBe(false);
      expect(snapshot.includes(Buffer.from(key, 'base64'))).toBe(false);
    }
  });

  it('in the stored objects', () => {
    expect(files.some((file) => file.path.endsWith('.parquet'))).toBe(true);
    expect(files.flatMap((file) => leaksIn(file.path, file.content))).toEqual([]);
  });

  it('in the process output or the log lines', () => {
    expect(output).toContain(`${FOLDER_KEY} is left out`);
    expect(leaksIn('output', output)).toEqual([]);
  });
});
