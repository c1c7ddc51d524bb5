/**
 * Property-based robustness suite: malformed requests of every kind against every route of a
 * running instance. Whatever the request, the reply is never a 5xx, never hangs, is JSON with a
 * `detail` when refused (empty only for 204 and 307), never shows a secret, and a refused
 * request leaves the state (every table, every file, the knobs) exactly as it was.
 *
 * `npm test` runs 3,000 requests in all from a fixed seed; `npm run fuzz` runs
 * LOCALPLANE_FUZZ_RUNS (default 100,000) from a random seed, printed at the end and in a
 * failure; LOCALPLANE_FUZZ_SEED=<seed> replays one.
 */
import fc from 'fast-check';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { concretePath, prepareKnownIds, readRequests, type KnownIds, type ReadRequest } from '../support/endpoints.ts';
import { fillEveryTable } from '../support/every-row.ts';
import { fuzzSettings } from '../support/fuzz-settings.ts';
import { inProcessApi } from '../support/in-process.ts';
import { send, sendRaw, type Reply } from '../support/http-client.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type FixtureWorkspace } from '../support/instance.ts';
import { objectKeyChecker, objectKeys } from './support/object-keys.ts';
import { s3For } from '../support/objstore.ts';
import { readSnapshotParts, type SnapshotParts } from '../support/snapshot-files.ts';
import { snapshotMutations } from './support/snapshot-mutations.ts';
import { stateDumper, type StateDumper } from '../support/state.ts';

const { runs: TOTAL_RUNS, seed: SEED } = fuzzSettings(3_000, 20_261_123);
const runsOf = (share: number) => Math.ceil(TOTAL_RUNS * share);
/** Generous: a block of N requests normally takes a few ms each. */
const blockTimeout = (runs: number) => 60_000 + runs * 25;
const REQUEST_TIMEOUT_MS = 10_000;
/** Put in every secret field of the valid bodies: no reply may ever show it. */
const SECRET_MARK = 'FUZZ-SECRET';
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

// GET /_localplane/requests answers the whole journal: a short one keeps the fuzz's many valid reads of it fast.
const ctx = useLocalplane({ freezeClock: true, journalCapacity: 200 });

// ---------------------------------------------------------------------------------------------
// The endpoints, by route: what a valid request looks like, so that one change makes it malformed.

type QueryKind = 'int' | 'bool' | 'uuid' | 'uuids' | 'enum' | 'enums' | 'text';

interface EndpointSpec {
  /** A valid body. */
  body?: () => unknown;
  /** The query parameters it reads. */
  query?: Record<string, QueryKind>;
  /**
   * Path values to use instead of the known ids: where a valid request would be too heavy, or delete what other
   * requests use.
   */
  params?: () => Record<string, string>;
  /** Sent only with other methods: it resets or restarts the instance's clock, or its answer never ends. */
  wrongMethodsOnly?: true;
  /** An event stream: a request that reaches it (a path trick too) is answered with no end. */
  neverEnds?: true;
}

let workspace: FixtureWorkspace;
let ids: KnownIds;
let otherWorkspaceIds: Record<string, string>;

const pageQuery: Record<string, QueryKind> = { limit: 'int', offset: 'int' };
const journalQuery: Record<string, QueryKind> = {
  since: 'int',
  limit: 'int',
  order: 'text',
  method: 'text',
  path: 'text',
  status: 'text',
  workspace_id: 'uuid',
  source: 'text',
  header: 'text',
  fault_rule: 'text',
  body_contains: 'text',
  response_body_contains: 'text',
  any_body_contains: 'text',
};

const SPECS: Record<string, EndpointSpec> = {
  'GET /openapi.json': {},
  'GET /docs': {},
  'GET /docs/:asset': { params: () => ({ asset: 'swagger-ui.css' }) },
  'GET /_localplane/health': {},
  'GET /_localplane/fixtures': {},
  'POST /_localplane/reset': { wrongMethodsOnly: true },
  // A snapshot writes a file (one of the snapshots folder); a restore replaces the whole state.
  'POST /_localplane/snapshot': { wrongMethodsOnly: true },
  'POST /_localplane/restore': { wrongMethodsOnly: true },
  'GET /_localplane/snapshots': {},
  // No saved snapshot has these names: a download answers 404, a delete removes nothing; an upload (a body of none or
  // JSON) is never a snapshot file.
  'GET /_localplane/snapshots/:name': { params: () => ({ name: 'fuzz-absent.snapshot' }) },
  'PUT /_localplane/snapshots/:name': { params: () => ({ name: 'fuzz.snapshot' }) },
  'DELETE /_localplane/snapshots/:name': { params: () => ({ name: 'fuzz-absent.snapshot' }) },
  'GET /_localplane/state': { query: { workspace_id: 'uuid' } },
  'GET /_localplane/clock': {},
  'POST /_localplane/clock/freeze': {},
  'POST /_localplane/clock/unfreeze': { wrongMethodsOnly: true },
  'POST /_localplane/clock/set': { body: () => ({ time: '2026-11-01T00:00:00Z' }) },
  'POST /_localplane/clock/advance': { body: () => ({ seconds: 0 }) },
  'POST /_localplane/clock/advance-to-next': {},
  'POST /_localplane/clock/run-until-idle': { body: () => ({ within_seconds: 1 }) },
  'GET /_localplane/tasks': {},
  'GET /_localplane/config': {},
  'PATCH /_localplane/config': { body: () => ({ export_rows_per_file: 5000, revision_step_seconds: { BUILDING: 3 } }) },
  'GET /_localplane/faults': {},
  'DELETE /_localplane/faults': {},
  'POST /_localplane/faults/destination-validations': {
    body: () => ({ error: 'access_denied', count: 1, workspace_id: ids.workspace_id }),
  },
  'POST /_localplane/faults/export-runs': { body: () => ({ mode: 'fail', count: 1, attempts: 1, message: 'fuzz' }) },
  'POST /_localplane/faults/revisions': {
    body: () => ({ stage: 'build', deployment_id: ids.deployment_id, count: 1 }),
  },
  // An unknown project: a valid body is a 404 rather than thousands of generated runs.
  'POST /_localplane/sessions/:session_id/runs': {
    body: () => ({ count: 1, start_time: '2026-10-01T00:00:00Z', days: 1 }),
    params: () => ({ session_id: UNKNOWN_UUID }),
  },
  'PUT /_localplane/deployments/:deployment_id/status': { body: () => ({ status: 'READY' }) },
  'GET /_localplane/deployments/:deployment_id/revisions/:revision_id/history': {},
  'PUT /_localplane/deployments/:deployment_id/revisions/:revision_id/status': { body: () => ({ status: 'DEPLOYED' }) },
  'PUT /_localplane/workspaces/:workspace_id/tier': { body: () => ({ tier: workspace.tier }) },
  'GET /_localplane/objstore/journal': {},
  'GET /_localplane/requests': { query: journalQuery },
  'GET /_localplane/requests/count': { query: journalQuery },
  'GET /_localplane/requests/stream': { wrongMethodsOnly: true, neverEnds: true },
  'GET /_localplane/requests/stats': { query: { minutes: 'int', errors: 'int' } },
  'GET /_localplane/requests/:request_id': { params: () => ({ request_id: '1' }) },
  'POST /_localplane/requests/find': {
    body: () => ({ method: 'GET', path: '/api/**', status: '2xx', header: { name: 'x-api-key' }, limit: 10 }),
  },
  'DELETE /_localplane/requests': {},
  'GET /_localplane/fault-rules': {},
  'GET /_localplane/fault-rules/near-misses': {},
  // A rule no request matches, and harmless if one did; every accepted rule is removed at once.
  'POST /_localplane/fault-rules': {
    body: () => ({ match: { header: { name: 'x-fuzz-never-sent', value: 'x' } }, action: { latency_ms: 0 }, count: 1 }),
  },
  'DELETE /_localplane/fault-rules': {},
  'DELETE /_localplane/fault-rules/:rule_id': { params: () => ({ rule_id: 'fault-rule-0' }) },
  // The known export covers an empty window: a valid query is a 409 (no files) rather than DuckDB's work.
  'POST /_localplane/sql': { body: () => ({ export_id: ids.bulk_export_id, sql: 'SELECT count(*) FROM runs' }) },
  'GET /_localplane/objstore/preview': { query: { bucket: 'text', key: 'text', rows: 'int' } },
  'GET /_localplane/objstore/keys': {},
  'POST /_localplane/objstore/keys': {
    body: () => ({
      access_key_id: 'LPFUZZKEY00000000001',
      secret_access_key: `${SECRET_MARK}-key`,
      permissions: ['get', 'create'],
    }),
  },
  'DELETE /_localplane/objstore/keys/:access_key_id': {},
  'GET /_localplane/objstore/buckets': {},
  'GET /_localplane/objstore/buckets/:bucket/objects': {
    query: { prefix: 'text', delimiter: 'text', search: 'text', cursor: 'text', limit: 'int' },
  },
  'GET /_localplane/objstore/buckets/:bucket/object': { query: { key: 'text' } },
  'PUT /_localplane/objstore/buckets/:bucket/object': { query: { key: 'text' } },
  'DELETE /_localplane/objstore/buckets/:bucket/object': { query: { key: 'text' } },
  'GET /_localplane/objstore/buckets/:bucket/object/content': { query: { key: 'text' } },
  'GET /api/v1/bulk-exports/destinations': {},
  'POST /api/v1/bulk-exports/destinations': {
    body: () => ({
      destination_type: 'objstore',
      display_name: 'fuzz destination',
      config: {
        bucket_name: 'exports',
        prefix: 'fuzz',
        endpoint_url: ctx.fixtures.objstore.endpoint_url,
        region: 'us-east-1',
        include_bucket_in_prefix: true,
      },
      credentials: { ...credentialsOf(fullKey(ctx.fixtures)), session_token: `${SECRET_MARK}-token` },
    }),
  },
  'GET /api/v1/bulk-exports/destinations/:destination_id': {},
  'PATCH /api/v1/bulk-exports/destinations/:destination_id': {
    body: () => ({
      credentials: { access_key_id: fullKey(ctx.fixtures).access_key_id, secret_access_key: `${SECRET_MARK}-rotated` },
    }),
  },
  'DELETE /api/v1/bulk-exports/destinations/:destination_id': { params: () => ({ destination_id: UNKNOWN_UUID }) },
  'GET /api/v1/bulk-exports/runs': { query: { source_bulk_export_id: 'uuid' } },
  'GET /api/v1/bulk-exports': { query: pageQuery },
  'POST /api/v1/bulk-exports': {
    body: () => ({
      bulk_export_destination_id: ids.destination_id,
      session_id: ids.session_id,
      start_time: '2026-01-01T00:00:00Z',
      end_time: '2026-01-02T00:00:00Z',
      filter: 'and(eq(is_root, true), gt(total_tokens, 100))',
      format: 'Parquet',
      format_version: 'v2_beta',
      compression: 'snappy',
      export_fields: ['id', 'name', 'start_time'],
      all_experiments: false,
    }),
  },
  'GET /api/v1/bulk-exports/:bulk_export_id': {},
  'PATCH /api/v1/bulk-exports/:bulk_export_id': { body: () => ({ status: 'Cancelled' }) },
  'GET /api/v1/bulk-exports/:bulk_export_id/runs': {},
  'GET /api/v1/bulk-exports/:bulk_export_id/runs/:run_id': {},
  'GET /v2/deployments': {
    query: {
      ...pageQuery,
      name_contains: 'text',
      status: 'text',
      remote_reconciled: 'bool',
      tag_value_ids: 'uuids',
      image_version: 'text',
      deployment_type: 'enum',
      deployment_ids: 'uuids',
    },
  },
  'POST /v2/deployments': {
    body: () => {
      const integration = workspace.integrations[0]!;
      return {
        name: 'fuzz-agent',
        source: 'codehost',
        source_config: {
          integration_id: integration.id,
          repo_url: integration.repos[0]!.url,
          deployment_type: 'dev',
          build_on_push: true,
          resource_spec: { min_scale: 1, cpu: 0.5, labels: { team: 'fuzz' }, volumes: [{ name: 'data' }] },
        },
        source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
        secrets: [{ name: 'API_KEY', value: `${SECRET_MARK}-value` }],
        secret_references: null,
      };
    },
  },
  'DELETE /v2/deployments': { query: { deployment_ids: 'uuids' } },
  'DELETE /v2/deployments/:deployment_id': {
    query: { delete_tracing_project: 'bool' },
    params: () => ({ deployment_id: spareDeploymentId() }),
  },
  'GET /v2/deployments/:deployment_id': {},
  'PATCH /v2/deployments/:deployment_id': {
    body: () => ({
      source_config: { build_on_push: false },
      source_revision_config: { repo_ref: 'main' },
      secrets: [{ name: 'K', value: `${SECRET_MARK}-patch` }],
    }),
  },
  'POST /v2/deployments/:deployment_id/revisions/:revision_id/redeploy': {},
  'POST /v2/deployments/:deployment_id/revisions': {
    body: () => ({
      revision_source: 'codehost',
      source_revision_config: { repo_ref: 'main' },
      secrets: [{ name: 'K', value: `${SECRET_MARK}-revision` }],
    }),
  },
  'POST /v2/deployments/:deployment_id/push-token': {},
  'POST /v2/deployments/:deployment_id/upload-url': {},
  'POST /v1/projects/:project_id/revisions/:revision_id/build_logs': {
    body: () => ({ order: 'asc', limit: 50, level: 'INFO', query: 'build', start_time: '2026-01-01T00:00:00Z' }),
  },
  'POST /v1/projects/:project_id/revisions/:revision_id/deploy_logs': { body: () => ({ order: 'desc', limit: 30 }) },
  'POST /v1/projects/:project_id/deploy_logs': {
    body: () => ({ order: 'desc', limit: 100, end_time: '2030-01-01T00:00:00Z' }),
  },
  'GET /v2/deployments/:deployment_id/revisions': { query: { ...pageQuery, status: 'enums' } },
  'GET /v2/deployments/:deployment_id/revisions/:revision_id': {},
  'GET /v2/auth/providers': {},
  'POST /v2/auth/providers': {
    body: () => ({
      provider_id: 'fuzz-provider',
      name: 'Fuzz provider',
      client_id: 'fuzz-client',
      client_secret: `${SECRET_MARK}-client-secret`,
      auth_url: 'https://fuzz.example/authorize',
      token_url: 'https://fuzz.example/token',
      uses_pkce: true,
      code_challenge_method: 'S256',
      provider_type: 'slack',
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  },
  'POST /v2/auth/providers/mcp-discover': {
    body: () => ({ provider_id: 'fuzz-mcp', name: 'Fuzz MCP', mcp_server_url: 'https://mcp.crm.example/mcp' }),
  },
  'GET /v2/auth/providers/:provider_id': {},
  'PATCH /v2/auth/providers/:provider_id': {
    body: () => ({
      name: 'Renamed by the fuzz',
      client_secret: `${SECRET_MARK}-rotated-client-secret`,
      uses_pkce: false,
    }),
  },
  // The known provider stays for the other requests.
  'DELETE /v2/auth/providers/:provider_id': { params: () => ({ provider_id: 'fuzz-absent-provider' }) },
  'GET /v2/listeners': { query: pageQuery },
  'POST /v2/listeners': {
    body: () => ({
      compute_type: 'k8s',
      compute_id: 'fuzz-cluster',
      compute_config: { k8s_namespaces: ['fuzz'] },
      version: '0.1.0',
    }),
  },
  'GET /v2/listeners/:listener_id': {},
  'PATCH /v2/listeners/:listener_id': {
    body: () => ({ version: '0.2.0', compute_config: { k8s_namespaces: ['fuzz', 'fuzz-2'] } }),
  },
  'DELETE /v2/listeners/:listener_id': { params: () => ({ listener_id: UNKNOWN_UUID }) },
  'GET /v1/integrations/forge/codehost/install': {},
  'GET /v1/integrations/forge/codehost/:integration_id/repos': {},
  'GET /info': {},
  'GET /api/v1/info': {},
};

interface Endpoint extends EndpointSpec {
  method: string;
  path: string;
}

const endpoints = (): Endpoint[] =>
  ctx.instance.routes.map((route) => ({ ...route, ...SPECS[`${route.method} ${route.path}`] }));
const isAdmin = (path: string) => path.startsWith('/_localplane');
const pathValues = (endpoint: Endpoint, overrides: Record<string, string> = {}) => ({
  ...ids,
  ...endpoint.params?.(),
  ...overrides,
});
/** A deployment that deletions may take: not the one of `ids`, which the other requests use. */
const spareDeploymentId = () => workspace.deployments.at(-1)!.id;
const pathOf = (endpoint: Endpoint) => concretePath(endpoint.path, pathValues(endpoint));

// ---------------------------------------------------------------------------------------------
// Values: what a malformed field, path segment or query parameter holds.

/** JSON text spliced into a body as it is (too big or too deep to build as a value), shown by its label. */
class RawJson {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
  [fc.toStringMethod]() {
    return this.label;
  }
}

const deepNesting = fc
  .tuple(fc.integer({ min: 2, max: 6000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? new RawJson('['.repeat(depth) + ']'.repeat(depth), `[ nested ${depth} deep ]`)
      : new RawJson('{"a": '.repeat(depth) + '1' + '}'.repeat(depth), `{ nested ${depth} deep }`),
  );
const hugeString = fc
  .integer({ min: 1_000_000, max: 1_100_000 })
  .map((length) => new RawJson(`"${'x'.repeat(length)}"`, `"x" x ${length}`));
const loneSurrogate = fc
  .tuple(fc.string({ maxLength: 5 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 5 }))
  .map(([before, code, after]) => `${before}${String.fromCharCode(code)}${after}`);
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  loneSurrogate,
  fc.string({ minLength: 1000, maxLength: 20_000 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    'null',
    'true',
    '0',
    '../..',
    '%00',
    "'; DROP TABLE deployments; --",
    'eq(',
    'and('.repeat(300),
  ),
);
const badUuid = fc.oneof(
  fc.uuid().map((uuid) => uuid.slice(0, -1)),
  fc.uuid().map((uuid) => uuid.replaceAll('-', '')),
  fc.uuid().map((uuid) => `{${uuid}}`),
  fc.uuid().map((uuid) => `${uuid}x`),
  fc.uuid().map((uuid) => `g${uuid.slice(1)}`),
  fc.constantFrom('', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
);
const badDate = fc.constantFrom(
  '2026-13-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T00:60:00Z',
  '0000-01-01T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  'yesterday',
  '2026/01/01',
  '01-01-2026',
  '2026-1-1',
  'T00:00:00Z',
  '1767225600',
);
const outOfRange = fc.constantFrom(
  -1,
  0,
  -0,
  1.5,
  169,
  100_001,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  1e21,
  1e308,
  -1e308,
  5e-324,
);
const unknownEnum = fc.constantFrom(
  'PARQUET',
  'parquet',
  'v3',
  'brotli',
  'cancelled',
  'ready',
  'plus ',
  'objstore2',
  'CREATING ',
  'codehost\u0000',
  'mode',
);
const weird: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: badUuid },
  { weight: 2, arbitrary: badDate },
  { weight: 2, arbitrary: outOfRange },
  { weight: 2, arbitrary: unknownEnum },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': null }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: hugeString },
);

/** JSON text of a value in which RawJson pieces stand as they are. */
function serialize(value: unknown): string {
  const pieces: string[] = [];
  const text = JSON.stringify(value, (_key, field) =>
    field instanceof RawJson ? `\u0000raw${pieces.push(field.text) - 1}\u0000` : field,
  );
  return (text ?? 'null').replace(/"\\u0000raw(\d+)\\u0000"/g, (_, index: string) => pieces[Number(index)]!);
}

/** Percent-encodes every byte of a text's UTF-8 but the unreserved ones (a lone surrogate becomes U+FFFD). */
const percentEncode = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[\w.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

type Path = (string | number)[];

/** Every place in a JSON value, parents before children. */
function placesIn(value: unknown, at: Path = []): { path: Path; isObject: boolean }[] {
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  const children = Array.isArray(value)
    ? value.flatMap((element, index) => placesIn(element, [...at, index]))
    : isObject
      ? Object.entries(value as object).flatMap(([key, field]) => placesIn(field, [...at, key]))
      : [];
  return [{ path: at, isObject }, ...children];
}

/** An object or an array inside a JSON value, indexed by a path's keys. */
type JsonContainer = Record<string | number, unknown>;

function changedAt(root: unknown, path: Path, change: (parent: JsonContainer, key: string | number) => void): unknown {
  const copy = structuredClone(root);
  let parent = copy as JsonContainer;
  for (const key of path.slice(0, -1)) parent = parent[key] as JsonContainer;
  change(parent, path.at(-1)!);
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Requests.

interface FuzzRequest {
  method: string;
  target: string;
  headers: Record<string, string | string[]>;
  body?: string | Uint8Array;
  chunked?: boolean;
}

const authHeaders = (path: string): Record<string, string> =>
  isAdmin(path) ? {} : { 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id };

const JSON_TYPE = 'application/json';
const CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'application/xml',
  'application/jsonx',
  'application/vnd.fuzz+json',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json;;;',
  'json',
  '*/*',
  '',
  null,
] as const;

/** A body of a JSON endpoint, malformed in one way. */
function malformedBodies(
  base: unknown,
): fc.Arbitrary<{ body: string | Uint8Array; contentType: string | null; chunked: boolean }> {
  const places = placesIn(base);
  const fields = places.filter((place) => place.path.length > 0).map((place) => place.path);
  const objects = places.filter((place) => place.isObject).map((place) => place.path);
  const baseText = serialize(base);
  const asJson = (value: unknown) => ({
    body: serialize(value),
    contentType: JSON_TYPE as string | null,
    chunked: false,
  });

  const wrongValue = fc
    .tuple(fc.constantFrom(...fields), weird)
    .map(([path, value]) => changedAt(base, path, (parent, key) => (parent[key] = value)));
  const missingField = fc
    .constantFrom(...fields)
    .map((path) =>
      changedAt(base, path, (parent, key) =>
        Array.isArray(parent) ? parent.splice(Number(key), 1) : delete parent[key],
      ),
    );
  const extraField = fc
    .tuple(
      fc.constantFrom(...objects),
      fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'credentials', 'secrets', 'id')),
      weird,
    )
    .map(([path, key, value]) =>
      path.length === 0
        ? { ...(base as object), [key]: value }
        : changedAt(base, [...path, key], (parent, name) => (parent[name] = value)),
    );
  const damagedText = fc
    .tuple(
      fc.nat(baseText.length),
      fc.nat(8),
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 3 }),
      fc.constantFrom('cut', 'insert', 'delete', 'replace', 'prefix'),
    )
    .map(([at, span, piece, how]) => {
      const body = {
        cut: () => baseText.slice(0, at),
        insert: () => baseText.slice(0, at) + piece + baseText.slice(at),
        delete: () => baseText.slice(0, at) + baseText.slice(at + span + 1),
        replace: () => baseText.slice(0, at) + piece + baseText.slice(at + piece.length),
        prefix: () => piece + baseText,
      }[how]();
      return { body, contentType: JSON_TYPE as string | null, chunked: false };
    });
  const notUtf8 = fc
    .tuple(
      fc.nat(baseText.length),
      fc.constantFrom(
        [0xff],
        [0xc3, 0x28],
        [0xed, 0xa0, 0x80],
        [0xc0, 0xaf],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0xe2, 0x82],
      ),
    )
    .map(([at, bytes]) => {
      const encoded = Buffer.from(baseText);
      return {
        body: new Uint8Array(Buffer.concat([encoded.subarray(0, at), Buffer.from(bytes), encoded.subarray(at)])),
        contentType: JSON_TYPE as string | null,
        chunked: false,
      };
    });
  const otherContentType = fc
    .tuple(fc.constantFrom(...CONTENT_TYPES), fc.oneof(fc.constant(base), wrongValue))
    .map(([contentType, value]) => ({ body: serialize(value), contentType, chunked: false }));
  const emptyish = fc
    .constantFrom('', ' ', '\r\n', '\u00ef\u00bb\u00bf')
    .map((body) => ({ body, contentType: JSON_TYPE as string | null, chunked: false }));

  return fc
    .tuple(
      fc.oneof(
        { weight: 5, arbitrary: wrongValue.map(asJson) },
        { weight: 2, arbitrary: missingField.map(asJson) },
        { weight: 2, arbitrary: extraField.map(asJson) },
        { weight: 2, arbitrary: weird.map(asJson) },
        { weight: 3, arbitrary: damagedText },
        { weight: 1, arbitrary: notUtf8 },
        { weight: 2, arbitrary: otherContentType },
        { weight: 1, arbitrary: emptyish },
      ),
      fc.boolean(),
    )
    .map(([body, chunked]) => ({ ...body, chunked: chunked && typeof body.body === 'string' && body.body.length > 0 }));
}

/** A path segment in place of an id: unknown, of another workspace, malformed, or a trick. */
const badPathValue = (name: string) =>
  fc.oneof(
    fc.uuid(),
    fc.constant(otherWorkspaceIds[name] ?? UNKNOWN_UUID),
    badUuid.map(percentEncode),
    fc.string({ unit: 'binary', maxLength: 40 }).map(percentEncode),
    fc.constant((ids[name] ?? '').toUpperCase()),
    fc.constantFrom('', '.', '..', '%2e%2e', '%2F', '%00', '%', '%zz', '%ff', ';', 'a'.repeat(3000), '%F0%9F%98%80'),
  );

function queryValue(kind: QueryKind): fc.Arbitrary<string> {
  const generic = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom('', ' ', ',', ',,', 'null', '[]', '1,2'),
  );
  const byKind: Record<QueryKind, fc.Arbitrary<string>> = {
    int: fc.oneof(
      fc.integer({ min: -5, max: 2000 }).map(String),
      fc.constantFrom(
        'abc',
        '1.5',
        '1e3',
        ' 5 ',
        '5.00',
        '+3',
        '-0',
        '0x10',
        '99999999999999999999',
        'NaN',
        'Infinity',
        '\u0661',
        '1_000',
        '9007199254740993',
      ),
    ),
    bool: fc.constantFrom('true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 'maybe', 'TRUE', '2', 't', 'nope'),
    uuid: fc.oneof(fc.uuid(), badUuid, fc.constantFrom(ids.bulk_export_id, ids.deployment_id)),
    uuids: fc
      .array(fc.oneof(fc.uuid(), badUuid, fc.constantFrom(spareDeploymentId(), UNKNOWN_UUID)), {
        minLength: 1,
        maxLength: 120,
      })
      .map((list) => list.join(',')),
    enum: fc.constantFrom('dev', 'prod', 'dev_free', 'DEV', 'staging', ''),
    enums: fc
      .array(fc.constantFrom('DEPLOYED', 'BUILDING', 'deployed', 'NOPE', ''), { maxLength: 4 })
      .map((list) => list.join(',')),
    text: fc.oneof(fc.string(), loneSurrogate, fc.string({ minLength: 500, maxLength: 4000 })),
  };
  return fc.oneof({ weight: 3, arbitrary: byKind[kind] }, { weight: 1, arbitrary: generic });
}

/** Query strings: known parameters with odd values, unknown ones, repeats, raw encodings. */
function queryStrings(spec: Record<string, QueryKind> = {}): fc.Arbitrary<string> {
  const names = Object.keys(spec);
  const known =
    names.length > 0
      ? fc.constantFrom(...names).chain((name) => queryValue(spec[name]!).map((value) => [name, value] as const))
      : fc.constant(null);
  const unknown = fc
    .tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 }))
    .map((pair) => pair as readonly [string, string]);
  const pair = fc.oneof({ weight: 4, arbitrary: known }, { weight: 1, arbitrary: unknown });
  const encoded = fc.array(pair, { maxLength: 6 }).map((pairs) =>
    pairs
      .filter((entry): entry is readonly [string, string] => entry !== null)
      .map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`)
      .join('&'),
  );
  const raw = fc.constantFrom(
    '',
    '&',
    '=',
    '==',
    '&&=&',
    'limit',
    'limit=%zz',
    '%zz=1',
    'a=%',
    'limit=1&limit=2&limit=x',
    'limit=+5',
    'offset=%2D1',
    'name_contains=%ED%A0%80',
    'limit=%FF',
    'x=\u00e9',
  );
  return fc
    .oneof({ weight: 4, arbitrary: encoded }, { weight: 1, arbitrary: raw })
    .map((query) => (query === '' ? '' : `?${query}`));
}

const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'MKCOL',
  'PURGE',
  'SEARCH',
  'LOCK',
];

/** Ways to spell a path that no route has as it is. */
const pathTricks: fc.Arbitrary<(path: string) => string> = fc.oneof(
  fc.constantFrom(
    (path: string) => `${path}/`,
    (path: string) => `${path}///`,
    (path: string) => `/${path}`,
    (path: string) => path.replace('/', '//'),
    (path: string) => path.replace(/\/([^/]*)$/, '/./$1'),
    (path: string) => path.replace(/\/([^/]*)$/, '/../$1'),
    (path: string) => `${path}/..`,
    (path: string) => `${path}/.`,
    (path: string) => path.toUpperCase(),
    (path: string) => `${path};x=1`,
    (path: string) => `${path}?`,
    (path: string) => `${path}#fragment`,
    (path: string) => `${path}%`,
    (path: string) => `${path}%2F`,
    (path: string) => path.replace('/', '\\'),
    (path: string) => path.replaceAll('/', '%2F'),
    (path: string) => `${path}/${'x'.repeat(8000)}`,
  ),
  fc.nat(200).map((at) => (path: string) => {
    const index = at % path.length;
    return `${path.slice(0, index)}%${path.charCodeAt(index).toString(16).padStart(2, '0')}${path.slice(index + 1)}`;
  }),
);

const headerTricks: fc.Arbitrary<(headers: Record<string, string>) => Record<string, string | string[]>> =
  fc.constantFrom(
    ({ 'x-api-key': _key, ...rest }: Record<string, string>) => rest,
    (headers: Record<string, string>) => ({ ...headers, 'x-api-key': 'lp_test_unknown_key_9999' }),
    (headers: Record<string, string>) => ({ ...headers, 'x-api-key': ` ${headers['x-api-key'] ?? ''} ` }),
    (headers: Record<string, string>) => ({
      ...headers,
      'x-api-key': [headers['x-api-key'] ?? 'a', 'lp_test_unknown_key_9999'],
    }),
    (headers: Record<string, string>) => ({ ...headers, 'x-tenant-id': otherWorkspaceIds.workspace_id! }),
    (headers: Record<string, string>) => ({ ...headers, 'x-tenant-id': 'not-a-uuid' }),
    (headers: Record<string, string>) => ({ ...headers, 'x-tenant-id': workspace.id.toUpperCase() }),
    (headers: Record<string, string>) => ({ ...headers, 'x-fuzz': 'x'.repeat(15_000) }),
    (headers: Record<string, string>) => ({ ...headers, 'content-type': 'text/plain', 'content-encoding': 'gzip' }),
    (headers: Record<string, string>) => ({ ...headers, accept: 'application/xml', 'accept-encoding': 'br, gzip' }),
    (headers: Record<string, string>) => ({ ...headers, expect: '100-continue' }),
  );

// ---------------------------------------------------------------------------------------------
// The properties.

let state: StateDumper;
/** The state as the last accepted request left it: tables and files, then the knobs. */
const baseline = { tables: '', knobs: '' };
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const knobAgent = new Agent({ keepAlive: true, maxSockets: 3 });
const counts = { requests: 0, accepted: 0, byStatus: new Map<number, number>() };

/**
 * The in-memory state: armed faults and fault rules, limits, the clock and what is scheduled on
 * it. A rule's `checked` count is traffic, not state: every request that reaches the rules
 * counts, as every request is journalled.
 */
async function knobs(): Promise<string> {
  const names = ['faults', 'fault-rules', 'config', 'tasks'];
  const views = await Promise.all(
    names.map((name) => send(ctx.instance.apiUrl, 'GET', `/_localplane/${name}`, { agent: knobAgent })),
  );
  views.forEach((view, at) => expect(view.status, `GET /_localplane/${names[at]} -> ${view.text}`).toBe(200));
  const { clock } = ctx.instance;
  const texts = views.map((view) => view.text.replace(/"checked":\d+,/g, ''));
  return [...texts, `clock ${clock.now()} ${clock.frozen}`].join('\n');
}

/**
 * Whether a request may reach a route that changes knobs: one that writes (GET and HEAD do not)
 * outside the API families, which cannot change knobs (the faults they consume are kept disarmed).
 */
const mayReachKnobs = ({ method, target }: { method: string; target: string }) =>
  !['GET', 'HEAD'].includes(method) && (!/^\/(api\/v1|v2|v1)\//.test(target) || /%|\.\.|_localplane/i.test(target));

function firstDifference(before: string, after: string): string {
  const beforeLines = before.split('\n');
  const afterLines = after.split('\n');
  const index = beforeLines.findIndex((line, at) => line !== afterLines[at]);
  const at = index === -1 ? beforeLines.length : index;
  return (
    `line ${at}: ${JSON.stringify(beforeLines[at]?.slice(0, 300))} ` +
    `became ${JSON.stringify(afterLines[at]?.slice(0, 300))}`
  );
}

/** A target's path as routed: percent-decoded where it can be, dot segments resolved. */
function routedPath(target: string): string {
  const path = target.split(/[?#]/)[0]!;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: taken as it is.
  }
  // Dot segments resolve before routing: `/../docs` is the page too.
  return new URL(decoded, 'http://localhost').pathname;
}

/** Whether a target is the reference page or one of its files. */
const isDocsPage = (target: string) => /^\/docs(\/|$)/.test(routedPath(target));

/** Whether a target is an object's download, answered in the object's own content type. */
const isObjectContent = (target: string) =>
  /^\/_localplane\/objstore\/buckets\/.+\/object\/content$/.test(routedPath(target));

/** Whatever the request: not a 5xx, the body its status calls for, no secret; refused, nothing changed. */
async function checkReply(request: { method: string; target: string }, reply: Reply): Promise<void> {
  counts.requests++;
  counts.byStatus.set(reply.status, (counts.byStatus.get(reply.status) ?? 0) + 1);
  const what = `${request.method} ${request.target.slice(0, 300)} -> ${reply.status} ${reply.text.slice(0, 300)}`;
  try {
    expect(reply.status, what).toBeLessThan(500);
    expect(reply.text.includes(SECRET_MARK), what).toBe(false);
    if (request.method !== 'HEAD') {
      if (reply.status === 204) expect(reply.text, what).toBe('');
      else if (reply.status === 307) {
        expect(reply.headers.location, what).toMatch(/^http:\/\//);
        expect(reply.text, what).toBe('');
      } else if (reply.status === 200 && isDocsPage(request.target)) {
        // The reference page and its files, and object downloads: the only replies that are not JSON.
        expect(reply.headers['content-type'], what).toMatch(/^(text\/(html|css|javascript)|image\/png)/);
      } else if (reply.status === 200 && isObjectContent(request.target)) {
        expect(reply.headers['content-disposition'], what).toMatch(/^attachment; /);
      } else {
        expect(reply.headers['content-type'], what).toMatch(/^application\/json/);
        expect(reply.json, what).not.toBeUndefined();
        if (reply.status >= 400) expect(reply.json, what).toHaveProperty('detail');
      }
    }
    if (reply.status >= 200 && reply.status < 300) {
      counts.accepted++;
      // An accepted request may start work on the clock (an export's runs): let it finish, then
      // disarm what a fault knob armed, so that no later refused request consumes it.
      await ctx.instance.clock.settle();
      // Disarming changes the knobs too, also after a GET of the faults.
      const knobs = request.target.includes('faults')
        ? '/faults'
        : request.target.includes('fault-rules')
          ? '/fault-rules'
          : null;
      if (knobs) await ctx.admin.request('DELETE', knobs);
      await takeBaseline({ knobs: knobs !== null || !['GET', 'HEAD'].includes(request.method) });
    } else {
      const tables = state.dump();
      if (tables !== baseline.tables)
        expect.fail(`${what}\nchanged the state: ${firstDifference(baseline.tables, tables)}`);
      const knobsNow = mayReachKnobs(request) ? await knobs() : baseline.knobs;
      if (knobsNow !== baseline.knobs)
        expect.fail(`${what}\nchanged the knobs: ${firstDifference(baseline.knobs, knobsNow)}`);
    }
  } catch (error) {
    // Shrinking goes on from the state as it is now.
    await takeBaseline();
    throw error;
  }
}

async function takeBaseline(what = { knobs: true }): Promise<void> {
  baseline.tables = state.dump();
  if (what.knobs) baseline.knobs = await knobs();
}

async function sendChecked(request: FuzzRequest): Promise<void> {
  const reply = await send(ctx.instance.apiUrl, request.method, request.target, {
    headers: request.headers,
    body: request.body,
    chunked: request.chunked,
    agent,
    timeoutMs: REQUEST_TIMEOUT_MS,
  });
  await checkReply(request, reply);
}

function assertProperty<T>(arbitrary: fc.Arbitrary<T>, run: (value: T) => Promise<void>, numRuns: number) {
  return fc.assert(fc.asyncProperty(arbitrary, run), { numRuns, seed: SEED });
}

beforeAll(async () => {
  ({ workspace, ids } = await prepareKnownIds(ctx));
  const other = workspaceByTier(ctx.fixtures, 'enterprise');
  otherWorkspaceIds = {
    workspace_id: other.id,
    deployment_id: other.deployments[0]!.id,
    integration_id: other.integrations[0]!.id,
    session_id: other.sessions[0]!.id,
  };
  state = stateDumper(ctx.instance);
  await takeBaseline();
});

afterAll(() => {
  agent.destroy();
  knobAgent.destroy();
  state?.close();
  const statuses = [...counts.byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`);
  process.stdout.write(
    `robustness fuzz: ${counts.requests} requests (${counts.accepted} accepted), ` +
      `seed ${SEED}; ${statuses.join(', ')}\n`,
  );
});

describe('robustness under malformed requests', () => {
  it('covers every route of the API', () => {
    const routes = ctx.instance.routes.map((route) => `${route.method} ${route.path}`).sort();
    expect(Object.keys(SPECS).sort()).toEqual(routes);
  });

  it('answers malformed bodies on every JSON endpoint', { timeout: blockTimeout(runsOf(0.4)) }, async () => {
    const bodyEndpoints = endpoints().filter((endpoint) => endpoint.body && !endpoint.wrongMethodsOnly);
    const requests = fc.constantFrom(...bodyEndpoints).chain((endpoint) =>
      malformedBodies(endpoint.body!()).map(({ body, contentType, chunked }): FuzzRequest => {
        const path = pathOf(endpoint);
        return {
          method: endpoint.method,
          target: path,
          headers: { ...authHeaders(path), ...(contentType === null ? {} : { 'content-type': contentType }) },
          body,
          chunked,
        };
      }),
    );
    await assertProperty(requests, sendChecked, runsOf(0.4));
  });

  it(
    'answers bad path parameters and query strings on every endpoint that has them',
    { timeout: blockTimeout(runsOf(0.25)) },
    async () => {
      const callable = endpoints().filter(
        (endpoint) => !endpoint.wrongMethodsOnly && (endpoint.query || endpoint.path.includes(':')),
      );
      const requests = fc.constantFrom(...callable).chain((endpoint) => {
        const names = [...endpoint.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
        const values = fc.tuple(...names.map((name) => fc.option(badPathValue(name), { freq: 2, nil: undefined })));
        return fc.tuple(values, queryStrings(endpoint.query)).map(([bad, query]): FuzzRequest => {
          const overrides = Object.fromEntries(
            names.flatMap((name, at) => (bad[at] === undefined ? [] : [[name, bad[at]!]])),
          );
          const path = concretePath(endpoint.path, pathValues(endpoint, overrides));
          const body = endpoint.body ? serialize(endpoint.body()) : undefined;
          return {
            method: endpoint.method,
            target: path + query,
            headers: { ...authHeaders(path), ...(body ? { 'content-type': JSON_TYPE } : {}) },
            body,
          };
        });
      });
      await assertProperty(requests, sendChecked, runsOf(0.25));
    },
  );

  it(
    'answers wrong methods, path tricks and odd headers on every endpoint',
    { timeout: blockTimeout(runsOf(0.2)) },
    async () => {
      const wrongMethod = fc.constantFrom(...endpoints()).chain((endpoint) =>
        fc.constantFrom(...METHODS.filter((method) => method !== endpoint.method)).map((method): FuzzRequest => {
          const path = pathOf(endpoint);
          return { method, target: path, headers: authHeaders(path) };
        }),
      );
      const trickedPath = fc
        .tuple(fc.constantFrom(...endpoints().filter((endpoint) => !endpoint.neverEnds)), pathTricks)
        .map(([endpoint, trick]): FuzzRequest => {
          const path = pathOf(endpoint);
          // Spelled differently, a reset could still reach its route: those go as GET.
          const method = endpoint.wrongMethodsOnly ? 'GET' : endpoint.method;
          const body = endpoint.body && !endpoint.wrongMethodsOnly ? serialize(endpoint.body()) : undefined;
          return {
            method,
            target: trick(path),
            headers: { ...authHeaders(path), ...(body ? { 'content-type': JSON_TYPE } : {}) },
            body,
          };
        });
      const oddHeaders = fc
        .tuple(fc.constantFrom(...endpoints().filter((endpoint) => !endpoint.wrongMethodsOnly)), headerTricks)
        .map(([endpoint, trick]): FuzzRequest => {
          const path = pathOf(endpoint);
          const body = endpoint.body ? serialize(endpoint.body()) : undefined;
          return {
            method: endpoint.method,
            target: path,
            headers: trick({ ...authHeaders(path), ...(body ? { 'content-type': JSON_TYPE } : {}) }),
            body,
          };
        });
      await assertProperty(fc.oneof(wrongMethod, trickedPath, oddHeaders), sendChecked, runsOf(0.2));
    },
  );

  it('answers raw request heads that no client would send', { timeout: blockTimeout(runsOf(0.15)) }, async () => {
    const paths = endpoints()
      .filter((endpoint) => !endpoint.wrongMethodsOnly)
      .map(pathOf);
    // A sound request with at most one odd part, so that as many reach the app as the parser refuses.
    const oddMethod = fc.oneof(
      fc.stringMatching(/^[A-Z]{1,12}$/),
      fc.constantFrom('get', 'G ET', '', 'GET\t', 'POST\u0000', '\u0413\u0415\u0422'),
    );
    const oddTarget = fc.oneof(
      fc
        .tuple(
          fc.constantFrom(...paths),
          fc.constantFrom(
            ' ',
            '\t',
            '\u007f',
            '\u00ff',
            '\u00e9',
            '"',
            '<',
            '{',
            '|',
            '^',
            '`',
            '\\',
            '%',
            '#',
            '\u0000',
          ),
        )
        .map(([path, piece]) => `${path}${piece}x`),
      fc.constantFrom(
        '*',
        '',
        '//',
        '/\\',
        'http://localhost/v2/deployments',
        'https://x/',
        'HTTP://X/',
        '?',
        'x',
        '/%',
        `/${'a'.repeat(20_000)}`,
      ),
    );
    const oddVersion = fc.constantFrom('HTTP/1.0', 'HTTP/0.9', 'HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1', '');
    const soundHeaders = fc.subarray([
      `X-API-Key: ${workspace.api_key}`,
      `X-Tenant-Id: ${workspace.id}`,
      'Content-Type: application/json',
      'Expect: 100-continue',
      'Accept: */*',
    ]);
    const oddHeader = fc.constantFrom(
      'Host: a b',
      'Host:',
      'Host: [::1',
      'Host: localhost',
      ' folded',
      'Bad Header: x',
      'NoColon',
      'X-Null: a\u0000b',
      'X-High: \u00e9',
      'Expect: telepathy',
      'Connection: upgrade\r\nUpgrade: websocket',
      `X-Big: ${'b'.repeat(17_000)}`,
    );
    const soundBody = fc
      .constantFrom('', '{}', '{"name": "x"}', '{', '[]')
      .map((payload) => ({ framing: payload ? [`Content-Length: ${payload.length}`] : [], payload }));
    const oddBody = fc.constantFrom(
      { framing: ['Content-Length: 2'], payload: '' },
      { framing: ['Content-Length: 2'], payload: '{}{}' },
      { framing: ['Content-Length: -1'], payload: '' },
      { framing: ['Content-Length: 1e3'], payload: '' },
      { framing: ['Content-Length: 99999999999999999999'], payload: '' },
      { framing: ['Content-Length: 2, 3'], payload: '{}' },
      { framing: ['Content-Length: 2', 'Transfer-Encoding: chunked'], payload: '{}' },
      { framing: ['Transfer-Encoding: chunked'], payload: '{}' },
      { framing: ['Transfer-Encoding: chunked'], payload: '2\r\n{}\r\n0\r\n\r\n' },
      { framing: ['Transfer-Encoding: chunked'], payload: 'zz\r\n' },
      { framing: ['Transfer-Encoding: gzip'], payload: '{}' },
      { framing: ['Transfer-Encoding: chunked, gzip'], payload: '{}' },
      { framing: [], payload: '\u00ff\u00fe' },
    );
    const heads = fc
      .constantFrom('none', 'method', 'target', 'version', 'header', 'line end', 'body', 'no host')
      .chain((odd) =>
        fc
          .record({
            method: odd === 'method' ? oddMethod : fc.constantFrom(...METHODS),
            target: odd === 'target' ? oddTarget : fc.constantFrom(...paths),
            version: odd === 'version' ? oddVersion : fc.constant('HTTP/1.1'),
            headers: fc
              .tuple(soundHeaders, odd === 'header' ? oddHeader.map((line) => [line]) : fc.constant([]))
              .map(([sound, odder]) => [...sound, ...odder]),
            body: odd === 'body' ? oddBody : soundBody,
          })
          .map(({ method, target, version, headers, body }) => {
            const eol = odd === 'line end' ? '\n' : '\r\n';
            const lines = [
              ...(odd === 'no host' ? [] : ['Host: localhost']),
              ...headers,
              ...body.framing,
              'Connection: close',
            ];
            return {
              method,
              target,
              bytes: Buffer.from(
                `${method} ${target} ${version}${eol}${lines.join(eol)}${eol}${eol}${body.payload}`,
                'latin1',
              ),
            };
          }),
      );
    await assertProperty(
      heads,
      async (head) => {
        const reply = await sendRaw(ctx.instance.apiUrl, head.bytes, REQUEST_TIMEOUT_MS);
        await checkReply(head, reply);
      },
      runsOf(0.15),
    );
  });

  it('never logs a secret', () => {
    expect(ctx.logs.filter((line) => line.includes(SECRET_MARK))).toEqual([]);
  });
});

describe('object keys sent to the objstore', () => {
  const BUCKET = 'fuzz-object-keys';
  const runs = runsOf(0.02);

  it(
    'each round-trips (put, head, get, listed as sent, delete) beside its neighbour, or is KeyTooLongError; never a ' +
      '5xx',
    { timeout: blockTimeout(runs * 8) },
    async () => {
      const checker = objectKeyChecker(ctx.instance.objstoreUrl, fullKey(ctx.fixtures), BUCKET);
      await checker.createBucket();
      try {
        await assertProperty(objectKeys, (key) => checker.check(key), runs);
      } finally {
        // Every key checked is deleted again, and the bucket with it: the state is as the other blocks left it.
        await checker.deleteBucket();
        checker.close();
        await takeBaseline();
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Hostile snapshot files (test/instance/support/snapshot-mutations.ts), restored into an instance of their
// own whose data dir sits in a sandbox: whatever a file names, nothing outside the data dir changes.

describe('robustness under hostile snapshot files', () => {
  const VICTIM = `victim-${process.pid}`;
  let sandbox: string;
  /** Where the snapshot files are written: apart from the sandbox, whose every file must stay as it was. */
  let files: string;
  let dataDir: string;
  let lp: InProcessLocalplane;
  let snapshots: StateDumper;
  let base: SnapshotParts;
  let outside: string[];
  /** Every read of the API and the admin API, as each workspace of the sound snapshot. */
  let reads: ReadRequest[];
  /** The instance's log: a background task that fails says so there. */
  const log: string[] = [];
  const tally = { files: 0, restored: 0 };

  /**
   * What any read answers with 5xx or throws after a restore, and the background tasks that failed while the clock
   * moves on.
   */
  async function unreadable(): Promise<string[]> {
    const failures: string[] = [];
    for (const read of reads) {
      try {
        const reply = await inProcessApi(lp, read.workspace).call(
          read.method,
          read.path,
          read.method === 'POST' ? {} : undefined,
        );
        if (reply.status >= 500)
          failures.push(`${read.method} ${read.path} -> ${reply.status} ${reply.text.slice(0, 200)}`);
      } catch (error) {
        failures.push(`${read.method} ${read.path} threw ${(error as Error).message}`);
      }
    }
    log.length = 0;
    await lp.clock.advance(60);
    return [...failures, ...log.filter((line) => /^task ".*" failed/.test(line))];
  }

  /** Everything in the sandbox but the data dir: `victim` folders at every depth a hostile name reaches. */
  const sandboxOutsideDataDir = () =>
    readdirSync(sandbox, { recursive: true, withFileTypes: true })
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((path) => path !== dataDir && !path.startsWith(`${dataDir}/`))
      .map((path) => `${path} ${lstatSync(path).isDirectory() ? 'folder' : readFileSync(path, 'utf8')}`)
      .sort();

  beforeAll(async () => {
    sandbox = mkdtempSync(join(tmpdir(), 'localplane-fuzz-sandbox-'));
    files = mkdtempSync(join(tmpdir(), 'localplane-fuzz-snapshots-'));
    let folder = sandbox;
    for (const depth of ['a', 'b', 'c']) {
      mkdirSync(join(folder, VICTIM));
      writeFileSync(join(folder, VICTIM, 'keep.txt'), `not localplane's (${depth})`);
      folder = join(folder, depth);
      mkdirSync(folder);
    }
    dataDir = join(folder, 'data');
    lp = await createLocalplane({ dataDir, snapshotsDir: files, freezeClock: true, log: (line) => log.push(line) });
    // A sound snapshot with rows in every table, an object and a bucket created over S3, so rows, values and entries of
    // each kind are there to change.
    const fixtures = await fillEveryTable(lp);
    const s3 = s3For(await lp.objstoreEndpoint(), fullKey(fixtures));
    await s3.send(new CreateBucketCommand({ Bucket: 'fuzz-created-bucket' }));
    await s3.send(new PutObjectCommand({ Bucket: fixtures.objstore.buckets[0], Key: 'fuzz/object.txt', Body: 'fuzz' }));
    s3.destroy();
    const file = join(files, 'base.snapshot');
    await lp.snapshot(file);
    base = readSnapshotParts(file);
    reads = readRequests(lp.routes, fixtures, (await inProcessApi(lp).get('/_localplane/state')).body);
    snapshots = stateDumper(lp);
    outside = sandboxOutsideDataDir();
  });

  afterAll(async () => {
    snapshots?.close();
    await lp?.stop();
    for (const folder of [sandbox, files]) if (folder) rmSync(folder, { recursive: true, force: true });
    process.stdout.write(
      `robustness fuzz: ${tally.files} hostile snapshot files (${tally.restored} restored), seed ${SEED}\n`,
    );
  });

  it(
    'refuses each with a clear error or restores it harmlessly: never a 5xx, unchanged when refused, nothing ' +
      'outside the data dir; what restores is read without a 5xx',
    { timeout: blockTimeout(runsOf(0.02) * 20) },
    async () => {
      let before = snapshots.dump();
      const file = join(files, 'mutated.snapshot');
      await assertProperty(
        snapshotMutations(base, VICTIM),
        async (mutation) => {
          tally.files++;
          writeFileSync(file, mutation.bytes);
          const reply = await lp.request('/_localplane/restore', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'mutated.snapshot' }),
          });
          const body = (await reply.json()) as { detail?: unknown };
          const what = `${mutation.what} -> ${reply.status} ${JSON.stringify(body).slice(0, 300)}`;
          expect(reply.status === 200 || reply.status === 400, what).toBe(true);
          if (reply.status === 400) {
            expect(body.detail, what).toMatch(/^\S+ (is not a usable localplane snapshot|cannot be restored here): ./);
            const after = snapshots.dump();
            if (after !== before) expect.fail(`${what}\nchanged the state: ${firstDifference(before, after)}`);
          } else {
            tally.restored++;
            expect(await unreadable(), `${what}: reads and background work`).toEqual([]);
            before = snapshots.dump();
          }
          expect(sandboxOutsideDataDir(), what).toEqual(outside);
          expect(existsSync(`/tmp/${VICTIM}`), what).toBe(false);
        },
        runsOf(0.02),
      );
      // The data dir starts again after whatever was restored or refused.
      await lp.stop();
      lp = await createLocalplane({ dataDir, freezeClock: true, log: () => {} });
      expect((await lp.request('/_localplane/health')).status).toBe(200);
      expect(sandboxOutsideDataDir()).toEqual(outside);
    },
  );
});
