import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { starletteRouting } from '../../src/shared/routing.ts';
import { concretePath, prepareKnownIds, type KnownIds } from '../support/endpoints.ts';
import { send, sendRaw, type Reply } from '../support/http-client.ts';
import { useLocalplane, type FixtureWorkspace } from '../support/instance.ts';
import { stateDumper, type StateDumper } from '../support/state.ts';

const ctx = useLocalplane({ freezeClock: true });
const SECRET = 'MY-SECRET-7f3a';
const MIB = 1024 * 1024;

let workspace: FixtureWorkspace;
let ids: KnownIds;
let state: StateDumper;

beforeAll(async () => {
  ({ workspace, ids } = await prepareKnownIds(ctx));
  state = stateDumper(ctx.instance);
});
afterAll(() => state?.close());

const auth = () => ({ 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id });
const json = { 'content-type': 'application/json' };

function call(
  method: string,
  target: string,
  body?: string | Uint8Array,
  headers: Record<string, string> = json,
  options: { chunked?: boolean } = {},
) {
  const authHeaders = target.startsWith('/_localplane') ? {} : auth();
  return send(ctx.instance.apiUrl, method, target, { body, headers: { ...authHeaders, ...headers }, ...options });
}

/** Runs a request that must be refused and checks that it changed nothing. */
async function refused(request: () => Promise<Reply>): Promise<Reply> {
  const before = state.dump();
  const reply = await request();
  expect(reply.status).toBeGreaterThanOrEqual(400);
  expect(reply.status).toBeLessThan(500);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(reply.json).toHaveProperty('detail');
  expect(state.dump()).toEqual(before);
  return reply;
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** Every route that reads a JSON body, with existing ids in its path. */
const bodyRoutes = () =>
  ctx.instance.routes
    .filter((route) => ['POST', 'PATCH', 'PUT'].includes(route.method))
    .filter(
      (route) =>
        ![
          '/_localplane/reset',
          '/_localplane/clock/freeze',
          '/_localplane/clock/unfreeze',
          '/_localplane/clock/advance-to-next',
        ].includes(route.path),
    )
    // POSTs that take no body.
    .filter((route) => !['/redeploy', '/push-token', '/upload-url'].some((ending) => route.path.endsWith(ending)))
    // A snapshot file's bytes, an object's bytes: not JSON.
    .filter(
      (route) =>
        !(
          route.method === 'PUT' &&
          ['/_localplane/snapshots/:name', '/_localplane/objstore/buckets/:bucket/object'].includes(route.path)
        ),
    )
    .map((route) => ({ method: route.method, target: concretePath(route.path, ids) }));

describe('request size and depth', () => {
  it('refuses a body over 1 MiB with 413 from its Content-Length, before reading it', async () => {
    const body = JSON.stringify({
      name: 'x'.repeat(MIB),
      source: 'codehost',
      source_config: {},
      source_revision_config: {},
      secrets: [],
    });
    const reply = await refused(() => call('POST', '/v2/deployments', body));
    expect(reply.status).toBe(413);
    expect(reply.json.detail).toBe('Request body too large: the limit is 1048576 bytes (1 MiB)');
  });

  it('refuses a streamed body without Content-Length once it passes 1 MiB', async () => {
    const body = JSON.stringify({ access_key_id: 'LPHUGE', secret_access_key: 's'.repeat(50 * MIB), permissions: [] });
    const reply = await refused(() => call('POST', '/_localplane/objstore/keys', body, json, { chunked: true }));
    expect(reply.status).toBe(413);
  });

  it('reads a body of exactly 1 MiB', async () => {
    const prefix = '{"name": "';
    const body = `${prefix}${'x'.repeat(MIB - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(MIB);
    const reply = await refused(() => call('POST', '/v2/deployments', body));
    expect(reply.status).toBe(422);
    expect(reply.json.detail.map((entry: { loc: unknown[] }) => entry.loc)).toContainEqual(['body', 'source']);
  });

  it('refuses nesting past 64 levels with 422 json_invalid on every JSON endpoint, admin ones included', async () => {
    const routes = bodyRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(15);
    for (const { method, target } of routes) {
      const reply = await refused(() => call(method, target, `{"a": ${nested(4250)}}`));
      expect(reply.status, `${method} ${target}`).toBe(422);
      expect(reply.json.detail).toEqual([
        {
          type: 'json_invalid',
          loc: ['body', 69],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Nesting deeper than 64 levels' },
        },
      ]);
    }
  });

  it('parses 64 levels, then validates them', async () => {
    const reply = await refused(() =>
      call('PUT', `/_localplane/workspaces/${ids.workspace_id}/tier`, `{"tier": ${nested(63)}}`),
    );
    expect(reply.json.detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'tier'] });
  });
});

describe('requests refused below the app', () => {
  const raw = (head: string) => sendRaw(ctx.instance.apiUrl, head);
  const cases: [what: string, head: string, status: number][] = [
    [
      'a request head over 16 KiB',
      `GET /v2/deployments HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      431,
    ],
    ['a malformed request line', 'garbage\r\n\r\n', 400],
    ['an unknown method', 'FROB /v2/deployments HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [
      'a duplicate Content-Length',
      'POST /v2/deployments HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      400,
    ],
    ['a non-numeric Content-Length', 'POST /v2/deployments HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n', 400],
    ['the target *', 'GET * HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a backslash in the path', 'GET /v2\\deployments HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['an HTTP/1.1 request without Host', 'GET /v2/deployments HTTP/1.1\r\n\r\n', 400],
    ['an invalid Host', 'GET /v2/deployments HTTP/1.1\r\nHost: a b\r\n\r\n', 400],
    ['an unknown HTTP version', 'GET /v2/deployments HTTP/3.7\r\nHost: x\r\n\r\n', 400],
    ['bare LF line ends', 'GET /v2/deployments HTTP/1.1\nHost: x\n\n', 400],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n', 400],
    [
      'an Expect other than 100-continue',
      'GET /_localplane/health HTTP/1.1\r\nHost: x\r\nExpect: telepathy\r\n\r\n',
      417,
    ],
  ];
  it.each(cases)('answers %s with JSON and closes the connection', async (_what, head, status) => {
    const reply = await raw(head);
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers.connection).toBe('close');
    expect(reply.json.detail).toEqual(expect.any(String));
  });

  it('keeps serving afterwards; an HTTP/1.0 request needs no Host', async () => {
    const reply = await raw('GET /_localplane/health HTTP/1.0\r\n\r\n');
    expect(reply.status).toBe(200);
    expect(reply.json.status).toBe('ok');
  });

  it(
    'answers a client that ends its side of the connection as soon as its request is sent, also when the answer ' +
      'waits on files',
    async () => {
      // sendRaw half-closes the connection after the request; the bucket listing reads the objstore's folders first.
      for (const version of ['HTTP/1.0', 'HTTP/1.1']) {
        const reply = await raw(`GET /_localplane/objstore/buckets ${version}\r\nHost: localhost\r\n\r\n`);
        expect(reply.status, version).toBe(200);
        expect(reply.json.buckets.map((bucket: { name: string }) => bucket.name)).toContain('exports');
      }
    },
  );

  it('answers a body cut short by the client with 400, never 500', async () => {
    const reply = await raw(
      `POST /v2/deployments HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${workspace.api_key}\r\nContent-Length: ` +
        `100\r\n\r\n{"name":`,
    );
    expect(reply.status).toBe(400);
    expect(ctx.logs.filter((line) => line.includes('internal error'))).toEqual([]);
  });
});

describe('secrets in 422 replies', () => {
  const destination = (credentials: unknown) =>
    JSON.stringify({ display_name: 'secret test', config: { bucket_name: 'exports' }, credentials });
  const deployment = (secrets: unknown) =>
    JSON.stringify({ name: 'secret-test', source: 'codehost', source_config: {}, source_revision_config: {}, secrets });
  const cases: [what: string, method: string, target: () => string, body: string][] = [
    ['credentials as a string', 'POST', () => '/api/v1/bulk-exports/destinations', destination(SECRET)],
    [
      'credentials as an array',
      'POST',
      () => '/api/v1/bulk-exports/destinations',
      destination([SECRET, { secret_access_key: SECRET }]),
    ],
    [
      'a secret_access_key of the wrong type',
      'POST',
      () => '/api/v1/bulk-exports/destinations',
      destination({ access_key_id: 'a', secret_access_key: [SECRET] }),
    ],
    [
      'a session_token of the wrong type',
      'PATCH',
      () => `/api/v1/bulk-exports/destinations/${ids.destination_id}`,
      JSON.stringify({ credentials: { access_key_id: 'a', secret_access_key: 'b', session_token: { t: SECRET } } }),
    ],
    [
      'credentials with a missing field',
      'PATCH',
      () => `/api/v1/bulk-exports/destinations/${ids.destination_id}`,
      JSON.stringify({ credentials: { secret_access_key: SECRET } }),
    ],
    ['secrets as an object', 'POST', () => '/v2/deployments', deployment({ OPENAI_API_KEY: SECRET })],
    ['secrets as a string', 'POST', () => '/v2/deployments', deployment(SECRET)],
    [
      'a secret value of the wrong type',
      'PATCH',
      () => `/v2/deployments/${ids.deployment_id}`,
      JSON.stringify({ secrets: [{ name: 'K', value: { nested: [SECRET] } }] }),
    ],
    [
      'a secret with a bad name beside its value',
      'POST',
      () => '/v2/deployments',
      deployment([{ name: 7, value: SECRET }]),
    ],
    [
      'secret fields in a body that is not an object',
      'POST',
      () => '/v2/deployments',
      JSON.stringify([{ secrets: [SECRET], credentials: SECRET, client_secret: SECRET }]),
    ],
    [
      'an objstore key secret of the wrong type',
      'POST',
      () => '/_localplane/objstore/keys',
      JSON.stringify({ access_key_id: 'LPX', secret_access_key: [SECRET], permissions: ['get'] }),
    ],
    [
      'malformed JSON after a secret',
      'POST',
      () => '/api/v1/bulk-exports/destinations',
      `{"credentials": {"secret_access_key": "${SECRET}" x`,
    ],
    ['a V8-quoted snippet', 'POST', () => '/v2/deployments', `{"secrets": [{"value": "${SECRET}"}]} trailing`],
  ];
  it.each(cases)('masks %s', async (_what, method, target, body) => {
    const reply = await refused(() => call(method, target(), body));
    expect(reply.status).toBe(422);
    expect(reply.text).not.toContain(SECRET);
  });

  it('shows a masked value where the secret was, whatever its type', async () => {
    const asString = await refused(() => call('POST', '/api/v1/bulk-exports/destinations', destination(SECRET)));
    expect(asString.json.detail).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body', 'credentials'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: '********',
      },
    ]);
    const asObject = await refused(() => call('POST', '/v2/deployments', deployment({ OPENAI_API_KEY: SECRET })));
    expect(asObject.json.detail).toEqual([
      { type: 'list_type', loc: ['body', 'secrets'], msg: 'Input should be a valid list', input: '********' },
    ]);
    const inside = await refused(() =>
      call(
        'POST',
        '/v2/deployments',
        JSON.stringify([{ name: 'x', secrets: [SECRET], credentials: { a: SECRET }, client_secret: SECRET }]),
      ),
    );
    expect(inside.json.detail[0].input).toEqual([
      { name: 'x', secrets: '********', credentials: '********', client_secret: '********' },
    ]);
  });

  it('masks the whole input of a non-JSON body on an endpoint with secret fields, and keeps it elsewhere', async () => {
    const masked = await refused(() =>
      call('POST', '/v2/deployments', deployment([{ name: 'K', value: SECRET }]), { 'content-type': 'text/plain' }),
    );
    expect(masked.json.detail).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: '********',
      },
    ]);
    const plain = await refused(() =>
      call('POST', '/_localplane/faults/revisions', '{"stage": "build"}', { 'content-type': 'text/plain' }),
    );
    expect(plain.json.detail[0]).toMatchObject({
      type: 'model_attributes_type',
      loc: ['body'],
      input: '{"stage": "build"}',
    });
  });

  it("gives json_invalid the position and Python's words, never a snippet of the text", async () => {
    const reply = await refused(() =>
      call('POST', '/api/v1/bulk-exports/destinations', `{"credentials": "${SECRET}",}`),
    );
    expect(reply.json.detail).toEqual([
      {
        type: 'json_invalid',
        loc: ['body', 33],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: 'Expecting property name enclosed in double quotes' },
      },
    ]);
  });

  it('never logs a secret', () => {
    expect(ctx.logs.filter((line) => line.includes(SECRET))).toEqual([]);
  });
});

describe('FastAPI parity', () => {
  const methodCases: [path: () => string, method: string, allow: string][] = [
    // `destinations` is also a value of /api/v1/bulk-exports/{bulk_export_id}, as in the real routing.
    [() => '/api/v1/bulk-exports/destinations', 'PUT', 'GET, HEAD, PATCH, POST'],
    [() => `/api/v1/bulk-exports/${ids.bulk_export_id}`, 'DELETE', 'GET, HEAD, PATCH'],
    [() => '/v2/deployments', 'PUT', 'DELETE, GET, HEAD, POST'],
    [() => `/v2/deployments/${ids.deployment_id}/revisions/${ids.revision_id}/redeploy`, 'GET', 'POST'],
    [() => '/v2/auth/providers', 'PUT', 'GET, HEAD, POST'],
    [() => `/v2/auth/providers/${ids.provider_id}`, 'POST', 'DELETE, GET, HEAD, PATCH'],
    [() => `/v2/listeners/${ids.listener_id}`, 'PUT', 'DELETE, GET, HEAD, PATCH'],
    [() => '/v1/integrations/forge/codehost/install', 'DELETE', 'GET, HEAD'],
    [() => '/_localplane/reset', 'GET', 'POST'],
    [() => '/_localplane/faults', 'OPTIONS', 'DELETE, GET, HEAD'],
    [() => '/_localplane/config', 'POST', 'GET, HEAD, PATCH'],
  ];
  it.each(methodCases)(
    'answers %s with a wrong method (%s) 405 and its Allow header, before authentication',
    async (path, method, allow) => {
      const reply = await refused(() => send(ctx.instance.apiUrl, method, path()));
      expect(reply.status).toBe(405);
      expect(reply.json).toEqual({ detail: 'Method Not Allowed' });
      expect(reply.headers.allow).toBe(allow);
    },
  );

  it('answers an unknown path 404 Not Found, also under a family without authentication', async () => {
    for (const path of ['/nowhere', '/v2/deployments/a/b/c/d', '/_localplane/nothing']) {
      const reply = await refused(() => send(ctx.instance.apiUrl, 'GET', path));
      expect(reply.status).toBe(404);
      expect(reply.json).toEqual({ detail: 'Not Found' });
    }
  });

  const queryCases: [target: () => string, entry: Record<string, unknown>][] = [
    [
      () => '/v2/deployments?limit=abc',
      {
        type: 'int_parsing',
        loc: ['query', 'limit'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: 'abc',
      },
    ],
    [() => '/v2/deployments?limit=1.5', { type: 'int_parsing', loc: ['query', 'limit'], input: '1.5' }],
    [() => '/v2/deployments?limit=', { type: 'int_parsing', loc: ['query', 'limit'], input: '' }],
    [
      () => '/v2/deployments?offset=-1',
      {
        type: 'greater_than_equal',
        loc: ['query', 'offset'],
        msg: 'Input should be greater than or equal to 0',
        input: '-1',
        ctx: { ge: 0 },
      },
    ],
    [() => '/v2/deployments?limit=101', { type: 'less_than_equal', loc: ['query', 'limit'], ctx: { le: 100 } }],
    [() => '/api/v1/bulk-exports?limit=1e3', { type: 'int_parsing', loc: ['query', 'limit'] }],
    [() => '/api/v1/bulk-exports?offset=99999999999999999999', { type: 'less_than_equal', loc: ['query', 'offset'] }],
    [() => `/v2/deployments/${ids.deployment_id}/revisions?limit=x`, { type: 'int_parsing', loc: ['query', 'limit'] }],
    [
      () => '/v2/deployments?remote_reconciled=maybe',
      {
        type: 'bool_parsing',
        loc: ['query', 'remote_reconciled'],
        msg: 'Input should be a valid boolean, unable to interpret input',
      },
    ],
    [
      () => `/v2/deployments/${ids.deployment_id}?delete_tracing_project=2`,
      { type: 'bool_parsing', loc: ['query', 'delete_tracing_project'] },
    ],
  ];
  it.each(queryCases)("answers the query %s with pydantic's error", async (target, entry) => {
    const method = target().includes('delete_tracing_project') ? 'DELETE' : 'GET';
    const reply = await refused(() => call(method, target()));
    expect(reply.status).toBe(422);
    expect(reply.json.detail).toEqual([expect.objectContaining(entry)]);
  });

  it("answers an exclusive bound in pydantic's words: runs added over 0 days are refused as not greater than 0", async () => {
    const reply = await refused(() =>
      call('POST', `/_localplane/sessions/${ids.session_id}/runs`, JSON.stringify({ count: 1, days: 0 })),
    );
    expect(reply.status).toBe(422);
    expect(reply.json.detail).toEqual([
      { type: 'greater_than', loc: ['body', 'days'], msg: 'Input should be greater than 0', input: 0, ctx: { gt: 0 } },
    ]);
  });

  it('reads integers as pydantic does, and the last of a repeated parameter', async () => {
    const padded = await call('GET', '/v2/deployments?limit=%20+3.00%20');
    expect(padded.status).toBe(200);
    expect(padded.json.resources).toHaveLength(3);
    const repeated = await call('GET', '/v2/deployments?limit=abc&limit=2');
    expect(repeated.json.resources).toHaveLength(2);
  });

  it('refuses a JSON body sent with another content type as FastAPI does', async () => {
    for (const contentType of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
    ]) {
      const reply = await refused(() =>
        call('PUT', `/_localplane/workspaces/${ids.workspace_id}/tier`, '{"tier": "enterprise"}', {
          'content-type': contentType,
        }),
      );
      expect(reply.status).toBe(422);
      expect(reply.json.detail).toEqual([
        {
          type: 'model_attributes_type',
          loc: ['body'],
          msg: 'Input should be a valid dictionary or object to extract fields from',
          input: '{"tier": "enterprise"}',
        },
      ]);
    }
  });

  it('reads a body as JSON without a content type, or with application/*+json', async () => {
    const contentTypes: Record<string, string>[] = [
      {},
      { 'content-type': 'application/merge-patch+json' },
      { 'content-type': 'Application/JSON; charset=utf-8' },
    ];
    for (const headers of contentTypes) {
      const reply = await call(
        'PUT',
        `/_localplane/workspaces/${ids.workspace_id}/tier`,
        `{"tier": "${workspace.tier}"}`,
        headers,
      );
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual({ id: ids.workspace_id, tier: workspace.tier });
    }
  });

  it('redirects to the other trailing-slash form with 307, the query kept', async () => {
    const reply = await call('GET', '/v2/deployments/?limit=2');
    expect(reply.status).toBe(307);
    expect(reply.headers.location).toBe(`${ctx.instance.apiUrl}/v2/deployments?limit=2`);
    expect(reply.text).toBe('');
    const many = await send(ctx.instance.apiUrl, 'POST', '/_localplane/clock/freeze///');
    expect([many.status, many.headers.location]).toEqual([307, `${ctx.instance.apiUrl}/_localplane/clock/freeze`]);
    const neither = await send(ctx.instance.apiUrl, 'GET', '/v2/nothing/');
    expect([neither.status, neither.json]).toEqual([404, { detail: 'Not Found' }]);
  });

  it('redirects the other way too, to a route that ends with a slash', async () => {
    const app = new Hono();
    app.use('*', starletteRouting(app));
    app.get('/items/', (c) => c.json([]));
    const reply = await app.request('http://localhost/items?page=2');
    expect([reply.status, reply.headers.get('location')]).toEqual([307, 'http://localhost/items/?page=2']);
    expect((await app.request('http://localhost/items/')).status).toBe(200);
  });

  it('refuses lone surrogates with 422 string_unicode, in values and keys', async () => {
    const reply = await refused(() =>
      call('POST', '/v2/deployments', '{"name": "bot-\\ud800", "tags": {"\\udc00": 1}, "ok": "\\ud83d\\ude00"}'),
    );
    expect(reply.status).toBe(422);
    expect(reply.json.detail).toEqual([
      {
        type: 'string_unicode',
        loc: ['body', 'name'],
        msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
        input: 'bot-\ud800',
      },
      {
        type: 'string_unicode',
        loc: ['body', 'tags', '\udc00'],
        msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
        input: '\udc00',
      },
    ]);
  });

  it("refuses a body that is not UTF-8 with FastAPI's 400", async () => {
    const bytes = Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const reply = await refused(() => call('POST', '/v2/deployments', bytes));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ detail: 'There was an error parsing the body' });
  });
});
