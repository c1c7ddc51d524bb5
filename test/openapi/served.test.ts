import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concretePath, prepareKnownIds, type KnownIds } from '../support/endpoints.ts';
import { send } from '../support/http-client.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type FixtureWorkspace } from '../support/instance.ts';
import { checkServedResponse } from '../support/openapi.ts';
import { stateDumper, type StateDumper } from '../support/state.ts';
import type { DestinationResponse } from '../../src/bulk-exports/schemas.ts';

/** What the tests read of the served OpenAPI document. */
interface MediaType {
  schema: Record<string, unknown>;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  summary: string;
  parameters: { name: string; in: string }[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
  security?: Record<string, string[]>[];
}
interface ServedDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { name: string }> };
}

const ctx = useLocalplane({ freezeClock: true });
let document: ServedDocument;
let workspace: FixtureWorkspace;
let ids: KnownIds;
let state: StateDumper;

beforeAll(async () => {
  ({ workspace, ids } = await prepareKnownIds(ctx));
  document = (await ctx.api.request<ServedDocument>('GET', '/openapi.json')).body;
  state = stateDumper(ctx.instance);
});
afterAll(() => state?.close());

const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const operationOf = (method: string, path: string) => document.paths[openapiPath(path)]?.[method.toLowerCase()];
const exampleOf = (method: string, path: string, status: number, name: string) =>
  operationOf(method, path).responses[status].content!['application/json'].examples![name].value;
const auth = () => ({ 'X-API-Key': workspace.api_key });
/**
 * The API's routes that take a workspace's key: not the harness's, the served reference's, nor GET /info (the hosted
 * service answers it to anyone).
 */
const takesKey = (path: string) =>
  !path.startsWith('/_localplane') &&
  !['/openapi.json', '/docs', '/docs/:asset', '/info', '/api/v1/info'].includes(path);

describe('GET /openapi.json', () => {
  it('describes every route of the instance, admin API included, with its parameters and answers', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(ctx.instance.routes.length).toBeGreaterThan(45);
    for (const { method, path } of ctx.instance.routes) {
      const operation = operationOf(method, path);
      expect(operation, `${method} ${path} in /openapi.json`).toBeDefined();
      expect(operation.summary, `${method} ${path}`).toMatch(/\w/);
      const pathParameters = operation.parameters
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name);
      expect(pathParameters, `${method} ${path}`).toEqual([...path.matchAll(/:(\w+)/g)].map(([, name]) => name));
      expect(
        operation.parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'Prefer'),
        `${method} ${path}`,
      ).toBe(true);
      const successes = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      expect(successes.length, `${method} ${path} has a success response`).toBeGreaterThan(0);
      if (takesKey(path))
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['401', '403']));
      if (operation.requestBody)
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(['400', '413', '422']),
        );
    }
  });

  it('declares the errors each endpoint gives, with their examples, and the component names of the reference', () => {
    const create = operationOf('POST', '/api/v1/bulk-exports');
    expect(Object.keys(create.responses).sort()).toEqual(['200', '400', '401', '403', '404', '413', '422', '429']);
    // session_id or all_experiments: exactly one, which the schema alone cannot say.
    expect(create.requestBody!.content['application/json'].schema.required).toEqual([
      'bulk_export_destination_id',
      'start_time',
    ]);
    expect(create.responses['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/BulkExport',
    });
    expect(create.responses['422'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/HTTPValidationError',
    });
    expect(Object.keys(create.responses['429'].content!['application/json'].examples!)).toEqual([
      'hourly_creates',
      'recurring_exports',
    ]);
    expect(Object.keys(operationOf('DELETE', '/v2/deployments').responses)).toEqual(
      expect.arrayContaining(['200', '207']),
    );
    expect(
      operationOf('DELETE', '/api/v1/bulk-exports/destinations/:destination_id').responses['204'].content,
    ).toBeUndefined();
    const list = operationOf('GET', '/v2/deployments').parameters.find(
      (parameter) => parameter.name === 'deployment_ids',
    );
    expect(list).toMatchObject({ in: 'query', required: false, explode: true });
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['BulkExport', 'Deployment', 'HTTPError', 'HTTPValidationError']),
    );
  });

  it('is neither authenticated nor the same object twice', async () => {
    const again = await send(ctx.instance.apiUrl, 'GET', '/openapi.json');
    expect(again.status).toBe(200);
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.json).toEqual(document);
  });
});

describe('the security schemes of /openapi.json', () => {
  it("declare the workspace's API key and tenant id as the hosted service's schemes of those names", () => {
    expect(document.components.securitySchemes).toEqual({
      'API Key': {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: expect.stringContaining('/_localplane/fixtures'),
      },
      'Tenant ID': { type: 'apiKey', in: 'header', name: 'X-Tenant-Id', description: expect.stringContaining('403') },
    });
  });

  it(
    'are required of every API operation, the key with the tenant id or alone, and of no harness, reference or ' +
      '/info operation',
    () => {
      for (const { method, path } of ctx.instance.routes) {
        const { security } = operationOf(method, path);
        if (takesKey(path))
          expect(security, `${method} ${path}`).toEqual([{ 'API Key': [], 'Tenant ID': [] }, { 'API Key': [] }]);
        else expect(security, `${method} ${path}`).toBeUndefined();
      }
    },
  );

  it(
    "are exactly what each API route's guard reads: any one requirement gets a request past it, the schemes of " +
      'none do not',
    async () => {
      // What each header the document names takes; one the suite does not know fails below.
      const credentials: Record<string, string> = { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id };
      let checked = 0;
      for (const { method, path } of ctx.instance.routes.filter(({ path }) => takesKey(path))) {
        const requirements = operationOf(method, path).security!;
        const named = [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))];
        // Every combination of the schemes the operation names: none, each alone, together.
        for (let mask = 0; mask < 2 ** named.length; mask++) {
          const sent = named.filter((_, index) => mask & (2 ** index));
          const headers: Record<string, string> = {};
          for (const id of sent) {
            const header = document.components.securitySchemes[id].name;
            expect(credentials, `the value of ${header} (${id})`).toHaveProperty(header);
            headers[header] = credentials[header]!;
          }
          const satisfied = requirements.some((requirement) =>
            Object.keys(requirement).every((id) => sent.includes(id)),
          );
          // An undocumented Prefer code is refused only once the guard has let the request through.
          const reply = await send(ctx.instance.apiUrl, method, concretePath(path, ids), {
            headers: { ...headers, prefer: 'code=418' },
          });
          expect(reply.status, `${method} ${path} with ${sent.join(' and ') || 'no scheme'}`).toBe(
            satisfied ? 400 : 401,
          );
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(100);
    },
  );
});

describe('GET /docs', () => {
  it('serves the reference page and its files from the swagger-ui-dist package, with their content types', async () => {
    const page = await send(ctx.instance.apiUrl, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain("url: '/openapi.json'");
    expect(page.text).toContain('validatorUrl: null');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map(([, path]) => path!);
    expect(assets).toEqual(['/docs/favicon-32x32.png', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']);
    expect(page.text).not.toMatch(/https?:\/\//);
    const types = {
      '/docs/favicon-32x32.png': /^image\/png/,
      '/docs/swagger-ui.css': /^text\/css/,
      '/docs/swagger-ui-bundle.js': /^text\/javascript/,
    };
    for (const [asset, type] of Object.entries(types)) {
      const reply = await send(ctx.instance.apiUrl, 'GET', asset);
      expect(reply.status, asset).toBe(200);
      expect(reply.headers['content-type'], asset).toMatch(type);
      expect(Number(reply.headers['content-length'] ?? reply.text.length), asset).toBeGreaterThan(500);
    }
    const missing = await send(ctx.instance.apiUrl, 'GET', '/docs/swagger-initializer.js');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ detail: 'Not Found' });
  });
});

describe('Prefer: code= and example=', () => {
  it('answers the documented error of the endpoint instead of running the request, and changes nothing', async () => {
    const before = state.dump();
    const journal = (await ctx.admin.request('GET', '/objstore/journal')).body.length;
    const limited = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      headers: { ...auth(), prefer: 'code=429', 'content-type': 'application/json' },
      body: JSON.stringify({
        bulk_export_destination_id: ids.destination_id,
        session_id: ids.session_id,
        start_time: '2026-01-01T00:00:00Z',
        end_time: '2026-01-02T00:00:00Z',
      }),
    });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual(exampleOf('POST', '/api/v1/bulk-exports', 429, 'hourly_creates'));

    const recurring = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      headers: { ...auth(), prefer: 'example=recurring_exports' },
    });
    expect(recurring.status).toBe(429);
    expect(recurring.json).toEqual(exampleOf('POST', '/api/v1/bulk-exports', 429, 'recurring_exports'));

    const missing = await send(ctx.instance.apiUrl, 'GET', `/v2/deployments/${ids.deployment_id}`, {
      headers: { ...auth(), prefer: 'code=404' },
    });
    expect(missing.status).toBe(404);
    expect(missing.json.detail).toMatch(/^Deployment ID [0-9a-f-]{36} not found\.$/);

    const invalid = await send(ctx.instance.apiUrl, 'PATCH', `/api/v1/bulk-exports/${ids.bulk_export_id}`, {
      headers: { ...auth(), prefer: 'code=422' },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });

    const deleted = await send(ctx.instance.apiUrl, 'DELETE', `/_localplane/objstore/keys/${ids.access_key_id}`, {
      headers: { prefer: 'code=404' },
    });
    expect(deleted.status).toBe(404);
    expect(state.dump()).toBe(before);
    expect((await ctx.admin.request('GET', '/objstore/journal')).body.length).toBe(journal);
  });

  it('forces every documented error of every endpoint, each answer its example, with nothing changed', async () => {
    const before = state.dump();
    let forced = 0;
    for (const { method, path } of ctx.instance.routes) {
      const target = concretePath(path, { ...ids, asset: 'swagger-ui.css' });
      for (const [status, response] of Object.entries(operationOf(method, path).responses)) {
        const examples = Object.entries(response.content?.['application/json']?.examples ?? {}).filter(
          ([name]) => name !== 'prefer_refused',
        );
        if (Number(status) < 400 || examples.length === 0) continue;
        const reply = await send(ctx.instance.apiUrl, method, target, {
          headers: { ...auth(), prefer: `code=${status}` },
        });
        expect(reply.status, `${method} ${target} Prefer: code=${status}`).toBe(Number(status));
        expect(reply.json, `${method} ${target} Prefer: code=${status}`).toEqual(examples[0]![1].value);
        forced++;
      }
    }
    expect(forced).toBeGreaterThan(100);
    expect(state.dump()).toBe(before);
  });

  it('selects the named destination-validation failures on POST and PATCH destinations, without a probe write', async () => {
    const journal = (await ctx.admin.request('GET', '/objstore/journal')).body.length;
    const body = JSON.stringify({
      display_name: 'preferred',
      config: { bucket_name: 'exports', endpoint_url: ctx.fixtures.objstore.endpoint_url },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    });
    const headers = (prefer: string) => ({ ...auth(), prefer, 'content-type': 'application/json' });
    for (const name of ['access_denied', 'unknown_key_id', 'invalid_endpoint', 'invalid_bucket']) {
      const created = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports/destinations', {
        headers: headers(`example=${name}`),
        body,
      });
      expect(created.status, name).toBe(400);
      expect(created.json, name).toEqual(exampleOf('POST', '/api/v1/bulk-exports/destinations', 400, name));
      expect(created.json.detail, name).toMatch(/^Failed to validate objstore destination: /);
      const patched = await send(
        ctx.instance.apiUrl,
        'PATCH',
        `/api/v1/bulk-exports/destinations/${ids.destination_id}`,
        { headers: headers(`code=400; example="${name}"`), body },
      );
      expect(patched.status, name).toBe(400);
      expect(patched.json, name).toEqual(created.json);
    }
    expect((await ctx.admin.request('GET', '/objstore/journal')).body.length).toBe(journal);
    expect(
      (await ctx.api.as(workspace).get<DestinationResponse[]>('/api/v1/bulk-exports/destinations')).body.map(
        (destination) => destination.display_name,
      ),
    ).not.toContain('preferred');
  });

  it('refuses a code or an example the endpoint does not document, naming those it does', async () => {
    const teapot = await send(ctx.instance.apiUrl, 'GET', '/api/v1/bulk-exports/destinations', {
      headers: { ...auth(), prefer: 'code=418' },
    });
    expect(teapot.status).toBe(400);
    expect(teapot.json).toEqual({
      detail: 'Prefer code=418 is not an error response of this endpoint; it documents: 401, 403',
    });
    const health = await send(ctx.instance.apiUrl, 'GET', '/_localplane/health', { headers: { prefer: 'code=500' } });
    expect(health.json).toEqual({
      detail: 'Prefer code=500 is not an error response of this endpoint; it documents: 403',
    });
    const unnamed = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      headers: { ...auth(), prefer: 'code=404, example=hourly_creates' },
    });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.detail).toBe(
      'Prefer example=hourly_creates is not an error example of this endpoint for code 404; it documents: ' +
        'destination_not_found, session_not_found',
    );
    // The refusal is documented too: the served document describes it as the endpoint's 400.
    expect(exampleOf('GET', '/api/v1/bulk-exports/destinations', 400, 'prefer_refused')).toEqual(teapot.json);
  });

  it('applies after authentication, and other preferences are ignored', async () => {
    const anonymous = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      headers: { prefer: 'code=429' },
    });
    expect(anonymous.status).toBe(401);
    const developer = workspaceByTier(ctx.fixtures, 'developer');
    const freeTier = await send(ctx.instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      headers: { 'X-API-Key': developer.api_key, prefer: 'code=429' },
    });
    expect(freeTier.status).toBe(403);
    const plain = await send(ctx.instance.apiUrl, 'GET', `/v2/deployments/${ids.deployment_id}`, {
      headers: { ...auth(), prefer: 'return=minimal, respond-async' },
    });
    expect(plain.status).toBe(200);
    expect(plain.json.id).toBe(ids.deployment_id);
  });
});

describe('the response check of the test helpers', () => {
  it('fails a response whose status or body the served document does not declare', async () => {
    const url = `${ctx.instance.apiUrl}${concretePath('/v2/deployments/:deployment_id', ids)}`;
    const deployment = (await ctx.api.as(workspace).get(`/v2/deployments/${ids.deployment_id}`)).body;
    await expect(
      checkServedResponse(url, 'GET', 200, 'application/json', JSON.stringify(deployment), null),
    ).resolves.toBeUndefined();
    await expect(checkServedResponse(url, 'GET', 418, 'application/json', '{"detail":"teapot"}', null)).rejects.toThrow(
      /status 418 is not in the served OpenAPI document/,
    );
    await expect(
      checkServedResponse(url, 'GET', 418, 'application/json', '{"detail":"teapot"}', 'fault-rule-1'),
    ).resolves.toBeUndefined();
    const { status: _status, ...withoutStatus } = deployment;
    await expect(
      checkServedResponse(url, 'GET', 200, 'application/json', JSON.stringify(withoutStatus), null),
    ).rejects.toThrow(/status/);
    await expect(
      checkServedResponse(url, 'GET', 404, 'application/json', '{"detail":["not a string"]}', null),
    ).rejects.toThrow(/does not match/);
    await expect(checkServedResponse(url, 'DELETE', 204, '', 'unexpected', null)).rejects.toThrow(/declares no body/);
  });
});
