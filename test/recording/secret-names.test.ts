// Secrets named as clients name them (a JSON `password`, a query's `access_token`, an `X-Custom-Token` header) are
// masked in a recording, in the upstream's request journal and kept out of its request log; `total_tokens` is no
// secret. It imports only modules that masking by name did not add, so that it runs on the code before it too.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, start, type Localplane } from '../../src/index.ts';
import { bodyJson, headerValue, readRecording, type HarEntry } from '../../src/recording/har.ts';
import type { JournalEntry } from '../../src/journal/schemas.ts';
import type { FixturesView } from '../support/instance.ts';

const SECRETS = {
  password: 'lp-names-json-password-0001',
  api_key: 'lp-names-json-api-key-0002',
  private_key: 'lp-names-json-private-key-0003',
  access_token: 'lp-names-query-access-token-0004',
  queryPassword: 'lp-names-query-password-0005',
  customToken: 'lp-names-header-custom-token-0006',
};
const TOTAL_TOKENS = 48_213_977;
const MASKED = '********';

const dir = mkdtempSync(join(tmpdir(), 'localplane-secret-names-'));
const out = join(dir, 'names.har');
const logs: string[] = [];
let upstream: Localplane;
let entries: HarEntry[];
let journal: JournalEntry[];

beforeAll(async () => {
  upstream = await start({ port: 0, objstorePort: 0, requestLog: true, log: (line) => logs.push(line) });
  const fixtures = (await (await fetch(`${upstream.apiUrl}/_localplane/fixtures`)).json()) as FixturesView;
  const globex = fixtures.workspaces.find((workspace) => workspace.self_hosted)!;
  const recorder = await record({ upstream: upstream.apiUrl, out, port: 0 });
  const query = `access_token=${SECRETS.access_token}&password=${SECRETS.queryPassword}`;
  const headers = {
    'X-API-Key': globex.api_key,
    'X-Tenant-Id': globex.id,
    'X-Custom-Token': SECRETS.customToken,
    'content-type': 'application/json',
  };
  // Fields the endpoint does not read are kept in the journal as sent (so masked there) and never echoed in the answer.
  const body = {
    compute_type: 'k8s',
    compute_id: 'names-cluster',
    compute_config: { k8s_namespaces: ['agents'] },
    password: SECRETS.password,
    api_key: SECRETS.api_key,
    signing: { private_key: SECRETS.private_key },
    usage: { total_tokens: TOTAL_TOKENS, prompt_tokens: 12, session_id: 'names-session' },
  };
  const created = await fetch(`${recorder.url}/v2/listeners?${query}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  expect(created.status, await created.text()).toBe(201);
  const listed = await fetch(`${recorder.url}/v2/deployments?name_contains=names&${query}`, { headers });
  expect(listed.status, await listed.text()).toBe(200);
  await recorder.stop();
  entries = readRecording(out).entries;
  journal = ((await (await fetch(`${upstream.apiUrl}/_localplane/requests`)).json()) as { requests: JournalEntry[] })
    .requests;
});

afterAll(async () => {
  await upstream?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const leaked = (text: string) => Object.values(SECRETS).filter((secret) => text.includes(secret));

describe('secrets named like secrets', () => {
  it('are masked in the recording, which names each place, and total_tokens is kept', () => {
    expect(leaked(readFileSync(out, 'utf8'))).toEqual([]);
    const [created, listed] = entries as [HarEntry, HarEntry];
    expect(created._masked).toEqual(
      expect.arrayContaining([
        'request.headers.x-custom-token',
        'request.queryString.access_token',
        'request.queryString.password',
        'request.postData.password',
        'request.postData.api_key',
        'request.postData.private_key',
      ]),
    );
    expect(bodyJson(created.request.postData)).toMatchObject({
      password: MASKED,
      api_key: MASKED,
      signing: { private_key: MASKED },
      usage: { total_tokens: TOTAL_TOKENS, prompt_tokens: 12, session_id: 'names-session' },
    });
    expect(headerValue(listed.request.headers, 'x-custom-token')).toBe(MASKED);
    expect(listed.request.url).toMatch(/\?name_contains=names&access_token=\*{8}&password=\*{8}$/);
  });

  it('are masked in the request journal, and total_tokens is kept', () => {
    expect(leaked(JSON.stringify(journal))).toEqual([]);
    const [created, listed] = journal as [JournalEntry, JournalEntry];
    expect(created.request.headers['x-custom-token']).toBe(MASKED);
    expect(listed.query).toEqual({ name_contains: 'names', access_token: MASKED, password: MASKED });
    expect(JSON.parse(created.request.body.text!)).toMatchObject({
      password: MASKED,
      api_key: MASKED,
      signing: { private_key: MASKED },
      usage: { total_tokens: TOTAL_TOKENS, prompt_tokens: 12, session_id: 'names-session' },
    });
  });

  it('are not in the request log', () => {
    expect(logs.filter((line) => /^(POST \/v2\/listeners|GET \/v2\/deployments) 20\d \d+ms$/.test(line))).toHaveLength(
      2,
    );
    expect(leaked(logs.join('\n'))).toEqual([]);
  });
});
