import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';

/**
 * GET /info, which the hosted service's SDK clients call when they start. The reference
 * document does not have it: the shape below is the hosted service's own OpenAPI document's, as
 * its SDKs' generated clients carry it (InfoListResponse: every field optional).
 */
const HOSTED_INFO_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: { type: 'string' },
    git_sha: { type: 'string' },
    license_expiration_time: { type: ['string', 'null'] },
    batch_ingest_config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        scale_down_nempty_trigger: { type: 'integer' },
        scale_up_nthreads_limit: { type: 'integer' },
        scale_up_qsize_trigger: { type: 'integer' },
        size_limit: { type: 'integer' },
        size_limit_bytes: { type: 'integer' },
        use_multipart_endpoint: { type: 'boolean' },
      },
    },
    customer_info: {
      type: 'object',
      properties: { customer_id: { type: 'string' }, customer_name: { type: 'string' } },
    },
    instance_flags: { type: 'object' },
    sdk_versions: { type: 'object' },
  },
};

/**
 * The oldest backend version the Python SDK accepts without a warning on any of its resources (annotation queues'
 * items).
 */
const NEWEST_MINIMUM_VERSION = '0.16.14';

/** Negative, zero or positive as version a is older than, the same as or newer than b (major.minor.patch). */
function compareVersions(a: string, b: string): number {
  const [ours, theirs] = [a, b].map((version) => version.split('.').map(Number));
  return ours!.map((part, index) => part - theirs![index]!).find((difference) => difference !== 0) ?? 0;
}

const newAjv = () => {
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
  (addFormats as unknown as typeof addFormats.default)(ajv);
  return ajv;
};

function expectValid(schema: object, body: unknown) {
  const validate = newAjv().compile(schema);
  expect(validate(body) ? [] : validate.errors).toEqual([]);
}

let lp: InProcessLocalplane;
beforeAll(async () => {
  lp = await createLocalplane();
});
afterAll(() => lp.stop());

async function info(path = '/info', headers: Record<string, string> = {}) {
  const response = await lp.request(path, { headers: { Accept: 'application/json', ...headers } });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: response.status, body: await response.json() };
}

describe('GET /info', () => {
  it('answers in the hosted service shape, with no API key', async () => {
    const { status, body } = await info();
    expect(status).toBe(200);
    expectValid(HOSTED_INFO_SCHEMA, body);
  });

  it('answers the same under /api/v1/info, where the generated clients ask, and whatever key is sent', async () => {
    const { body } = await info();
    expect(await info('/api/v1/info')).toEqual({ status: 200, body });
    expect(
      await info('/info', {
        'X-API-Key': 'not-a-key-of-any-workspace',
        'X-Tenant-Id': '00000000-0000-4000-8000-000000000000',
      }),
    ).toEqual({ status: 200, body });
  });

  it('gives the Python client what it reads when it starts, so it warns of nothing', async () => {
    const { body } = await info();
    // The client's model of it takes a license time as a datetime or null; the hosted service has none.
    expect(body.license_expiration_time).toBeNull();
    // The tracing thread indexes these four (a missing one is a KeyError in its thread) and reads
    // use_multipart_endpoint.
    const config = body.batch_ingest_config;
    for (const name of [
      'size_limit',
      'scale_up_nthreads_limit',
      'scale_up_qsize_trigger',
      'scale_down_nempty_trigger',
      'size_limit_bytes',
    ]) {
      expect(Number.isInteger(config[name]) && config[name] > 0, name).toBe(true);
    }
    expect(config.use_multipart_endpoint).toBe(true);
    // Multipart ingestion with zstandard installed (a dependency of the SDK) warns unless the flag is on.
    expect(body.instance_flags.zstd_compression_enabled).toBe(true);
    // The version must parse as major.minor.patch and be no older than any minimum the SDK checks.
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(compareVersions(body.version, NEWEST_MINIMUM_VERSION)).toBeGreaterThanOrEqual(0);
  });

  it('is declared in the served document at both paths, asking for no credential, and answers as declared', async () => {
    const document = await (await lp.request('/openapi.json')).json();
    const { body } = await info();
    for (const path of ['/info', '/api/v1/info']) {
      const operation = document.paths[path]?.get;
      expect(operation, path).toBeDefined();
      expect(operation.security).toBeUndefined();
      expectValid(operation.responses['200'].content['application/json'].schema, body);
    }
  });
});
