// `localplane verify` and `fixtures from-recording` on recorded JSON nested 100,000 levels deep, which JSON.parse
// reads: each answers as it does for any other body, by what the comparison or the placement finds, never a stack
// overflow;
// `localplane record` and the request journal mask the secrets in such JSON as in any other.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, start, type Localplane, type VerifyReport } from '../../src/index.ts';
import type { JournalEntry } from '../../src/journal/schemas.ts';
import { bodyJson, readRecording, type HarEntry } from '../../src/recording/har.ts';
import { runCli } from '../support/cli.ts';

const DEPTH = 100_000;
const nested = (open: string, leaf: string, close: string) => `${open.repeat(DEPTH)}${leaf}${close.repeat(DEPTH)}`;
const deepArrays = nested('[', '', ']');
const deepObjects = (leaf: string) => nested('{"a":', leaf, '}');

/** Acme Analytics of the shipped fixtures: no listeners, so GET /v2/listeners answers an empty page. */
const WORKSPACE = '6e81f035-1834-4208-8f34-e3a9482cde15';
/** An id only the bottom of a deep answer shows. */
const DEEP_ID = '5b0e7c1a-9d2f-4e3b-8a6c-7f1d2e3c4b5a';
const DESTINATION_ID = '1b7a3c2e-5d4f-4a6b-8c9d-0e1f2a3b4c5d';

const dir = mkdtempSync(join(tmpdir(), 'localplane-depth-'));
const MATCHES = join(dir, 'matches.har');
const DRIFTS = join(dir, 'drifts.har');
let instance: Localplane;

const JSON_TYPE = { name: 'Content-Type', value: 'application/json' };
const jsonBody = (text: string) => ({ size: Buffer.byteLength(text), mimeType: 'application/json', text });

/** An exchange of Acme's, its bodies JSON text; `request` is the request's body, if it has one. */
function exchange(method: string, path: string, status: number, answer: string, request?: string): HarEntry {
  return {
    startedDateTime: '2026-01-05T10:00:00.000Z',
    time: 1,
    request: {
      method,
      url: `https://api.example.com${path}`,
      httpVersion: 'HTTP/1.1',
      headers: [{ name: 'X-API-Key', value: '********' }, { name: 'X-Tenant-Id', value: WORKSPACE }, JSON_TYPE],
      queryString: [],
      ...(request === undefined ? {} : { postData: jsonBody(request) }),
    },
    response: { status, statusText: '', httpVersion: 'HTTP/1.1', headers: [JSON_TYPE], content: jsonBody(answer) },
  };
}

/** A HAR file of these entries, with `log._nested` (a tool's own field) holding the JSON text given. */
function writeRecording(path: string, entries: HarEntry[], nestedText?: string): void {
  const nestedField = nestedText === undefined ? '' : `"_nested":${nestedText},`;
  const creator = '"version":"1.2","creator":{"name":"hand","version":"1"}';
  writeFileSync(path, `{"log":{${creator},${nestedField}"entries":${JSON.stringify(entries)}}}`);
}

/** A destination the fixtures could hold but for its objstore_additional_kwargs, nested 100,000 levels deep. */
const deepDestination = JSON.stringify({
  id: DESTINATION_ID,
  destination_type: 'objstore',
  display_name: 'deep kwargs',
  config: {
    endpoint_url: null,
    prefix: '',
    bucket_name: 'deep-kwargs',
    region: 'us-east-1',
    objstore_additional_kwargs: 'KWARGS',
    include_bucket_in_prefix: true,
  },
  created_at: '2026-01-05T10:00:00+00:00',
  updated_at: '2026-01-05T10:00:00+00:00',
}).replace('"KWARGS"', deepObjects('1'));

beforeAll(async () => {
  instance = await start({ port: 0, objstorePort: 0, log: () => {} });
  // The instance's own answer to a request body nested too deep for it, as a recording against it holds it: a 422 whose
  // loc is where the body passes 64 levels, so the same answer to the replay shows the body went out as recorded.
  const tooDeep = await instance.request('/v2/listeners', {
    method: 'POST',
    headers: { 'X-API-Key': 'lp_test_acme_plus_0001', 'X-Tenant-Id': WORKSPACE, 'Content-Type': 'application/json' },
    body: deepObjects('1'),
  });
  expect(tooDeep.status).toBe(422);
  writeRecording(MATCHES, [
    exchange('GET', '/v2/listeners', 200, `{"resources":${deepArrays},"offset":0}`),
    exchange('GET', '/v2/listeners', 200, `{"resources":[${deepObjects('1')}],"offset":0}`),
    exchange('POST', '/v2/listeners', tooDeep.status, await tooDeep.text(), deepObjects('1')),
  ]);
  writeRecording(
    DRIFTS,
    [
      exchange('GET', '/v2/auth/providers', 200, deepArrays),
      exchange('GET', '/v2/listeners', 200, deepObjects(`"${DEEP_ID}"`)),
      exchange('GET', `/v2/listeners/${DEEP_ID}`, 404, '{"detail":"Not Found"}'),
      exchange('GET', `/api/v1/bulk-exports/destinations/${DESTINATION_ID}`, 200, deepDestination),
    ],
    deepArrays,
  );
}, 60_000);
afterAll(async () => {
  await instance?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recorded JSON nested 100,000 levels deep', () => {
  it('localplane verify --url compares it as any other body: same where the shapes agree, exit code 0', async () => {
    const result = await runCli(['verify', MATCHES, '--url', instance.apiUrl]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('3 exchanges: 3 same, 0 drift, 0 not comparable, 0 skipped\n');
    expect(result.code).toBe(0);
  }, 120_000);

  it('localplane verify --url reports its drift and the ids at its bottom, exit code 1', async () => {
    const result = await runCli(['verify', DRIFTS, '--url', instance.apiUrl, '--json']);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as VerifyReport;
    expect(report.results.map(({ index, outcome, reasons }) => ({ index, outcome, reasons }))).toEqual([
      { index: 0, outcome: 'drift', reasons: ['body[]: array → object'] },
      { index: 1, outcome: 'drift', reasons: ['body.a: missing', 'body.resources: extra', 'body.offset: extra'] },
      { index: 2, outcome: 'not comparable', reasons: [`${DEEP_ID} (from the answer of #1) has no counterpart here`] },
      { index: 3, outcome: 'not comparable', reasons: [`${DESTINATION_ID} existed upstream before the recording`] },
    ]);
    expect(result.code).toBe(1);
  }, 120_000);

  it(
    'localplane fixtures from-recording reads it, and leaves out a resource nested deeper than the API takes, ' +
      'saying why',
    async () => {
      const matches = await runCli(['fixtures', 'from-recording', MATCHES, '--out', join(dir, 'from-matches')]);
      expect(matches).toMatchObject({ code: 0, stderr: '' });
      expect(matches.stdout).toContain('Not placed: nothing\n');
      const drifts = await runCli(['fixtures', 'from-recording', DRIFTS, '--out', join(dir, 'from-drifts')]);
      expect(drifts).toMatchObject({ code: 0, stderr: '' });
      expect(drifts.stdout).toContain(
        `Not placed: 1\n  - destination ${DESTINATION_ID}: nested ${DEPTH + 2} levels deep, more than the 64 levels ` +
          `localplane's API takes\n`,
      );
    },
    120_000,
  );
});

describe('secrets in JSON nested 100,000 levels deep', () => {
  const SECRETS = {
    top: 'lp-depth-secret-top-0001',
    bottom: 'lp-depth-secret-bottom-0002',
    answer: 'lp-depth-secret-answer-0003',
  };
  const MASKED = '********';
  const OUT = join(dir, 'deep-secrets.har');
  /** A request body with a secret at its top (within what the journal shows) and one at its bottom. */
  const requestBody = `{"password":"${SECRETS.top}","a":${deepObjects(`{"password":"${SECRETS.bottom}"}`)}}`;
  const answerBody = deepObjects(`{"client_secret":"${SECRETS.answer}"}`);
  let deepServer: Server;
  let statuses: number[];

  /** The value `DEPTH` levels of `a` down. */
  const bottomOf = (value: unknown) => {
    let at = value as { a: unknown };
    for (let level = 0; level < DEPTH; level++) at = at.a as { a: unknown };
    return at;
  };
  const leaked = (text: string) => Object.values(SECRETS).filter((secret) => text.includes(secret));

  beforeAll(async () => {
    deepServer = createServer((_, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(answerBody),
    );
    await new Promise<void>((listening) => deepServer.listen(0, '127.0.0.1', listening));
    const toInstance = await record({ upstream: instance.apiUrl, out: OUT, port: 0 });
    const toDeepServer = await record({
      upstream: `http://127.0.0.1:${(deepServer.address() as { port: number }).port}`,
      out: join(dir, 'deep-answer.har'),
      port: 0,
    });
    try {
      const sent = await fetch(`${toInstance.url}/v2/listeners`, {
        method: 'POST',
        headers: {
          'X-API-Key': 'lp_test_acme_plus_0001',
          'X-Tenant-Id': WORKSPACE,
          'Content-Type': 'application/json',
        },
        body: requestBody,
      });
      await sent.text();
      const answered = await fetch(`${toDeepServer.url}/deep`);
      expect(await answered.text()).toBe(answerBody);
      statuses = [sent.status, answered.status];
    } finally {
      await toInstance.stop();
      await toDeepServer.stop();
    }
  }, 60_000);
  afterAll(() => new Promise((closed) => deepServer?.close(closed)));

  it(
    'localplane record relays the exchanges and masks the secrets at the top and the bottom of a request and an ' +
      'answer',
    () => {
      // The instance refuses a body nested deeper than 64 levels; the other upstream answers its deep JSON.
      expect(statuses).toEqual([422, 200]);
      const [sent] = readRecording(OUT).entries as [HarEntry];
      expect(leaked(readFileSync(OUT, 'utf8'))).toEqual([]);
      expect(sent.response.status).toBe(422);
      expect(sent._masked).toEqual(['request.headers.x-api-key', 'request.postData.password']);
      const body = bodyJson(sent.request.postData) as { password: string; a: unknown };
      expect(body.password).toBe(MASKED);
      expect(bottomOf(body.a)).toEqual({ password: MASKED });
      const [answered] = readRecording(join(dir, 'deep-answer.har')).entries as [HarEntry];
      expect(leaked(readFileSync(join(dir, 'deep-answer.har'), 'utf8'))).toEqual([]);
      expect(answered._masked).toEqual(['response.content.client_secret']);
      expect(bottomOf(bodyJson(answered.response.content))).toEqual({ client_secret: MASKED });
    },
  );

  it('the request journal masks the secret it shows of the request', async () => {
    const { requests } = (await (await fetch(`${instance.apiUrl}/_localplane/requests`)).json()) as {
      requests: JournalEntry[];
    };
    expect(leaked(JSON.stringify(requests))).toEqual([]);
    const shown = requests.filter(
      (entry) => entry.method === 'POST' && entry.request.body.text?.startsWith('{"password":'),
    );
    const start = `{"password":"${MASKED}","a":{"a":{"a":`;
    expect(shown.map((entry) => entry.request.body.text!.slice(0, start.length))).toEqual([start]);
    expect(shown[0]!.request.body).toMatchObject({ size: Buffer.byteLength(requestBody), truncated: true });
  });
});
