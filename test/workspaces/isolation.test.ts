import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { codehostDeploymentBody } from '../support/deployments.ts';
import type { UntypedJson } from '../support/untyped-json.ts';
import {
  credentialsOf,
  eventually,
  fullKey,
  useLocalplane,
  workspaceByTier,
  type FixtureWorkspace,
  type WorkspaceApi,
} from '../support/instance.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

/**
 * A key of workspace A can not read, list, change, cancel, delete or use anything of
 * workspace B, on any endpoint of the API, and B's state is the same after every attempt.
 * The clock is frozen, so that nothing of B moves on its own while it is watched.
 */
const ctx = useLocalplane({ freezeClock: true });

const BULK = '/api/v1/bulk-exports';
const DEPLOYMENTS = '/v2/deployments';
const NOW = '2026-10-04T12:00:00Z';
const FORBIDDEN = 'Forbidden: the API key does not belong to the workspace in X-Tenant-Id';
const PLAN_GATE =
  'Bulk export is only available on the Plus and Enterprise plans. Upgrade your plan to use bulk exports.';

interface World {
  workspace: FixtureWorkspace;
  client: WorkspaceApi;
  slug: string;
  /** Its tier has bulk export; without it every bulk-export id below is a random uuid. */
  bulkExport: boolean;
  sessionId: string;
  destinationId: string;
  oneTimeExportId: string;
  runId: string;
  recurringExportId: string;
  childExportId: string;
  /** A codehost deployment made for the test, with secrets, and its first revision. */
  deploymentId: string;
  deploymentName: string;
  revisionId: string;
  integrationId: string;
  repoUrl: string;
  listenerIds: string[];
  providers: { id: string; provider_id: string }[];
}

const worlds = new Map<string, World>();
let sequence = 0;
const unique = (stem: string) => `${stem}-${++sequence}`;

function destinationBody(world: { slug: string }) {
  return {
    destination_type: 'objstore',
    display_name: unique(`isolation ${world.slug}`),
    config: {
      bucket_name: ctx.fixtures.objstore.buckets[0],
      prefix: `isolation/${world.slug}`,
      endpoint_url: ctx.fixtures.objstore.endpoint_url,
    },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  };
}

const codehostBody = (world: { workspace: FixtureWorkspace }, name: string) =>
  codehostDeploymentBody(world.workspace, name, { secrets: [{ name: 'API_TOKEN', value: 'isolation-test-secret' }] });

/** Runs what is due now (the frozen clock starts nothing by itself) until the export has ended. */
async function waitForExport(client: WorkspaceApi, id: string): Promise<void> {
  await eventually(async () => {
    expect((await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 0 } })).status).toBe(200);
    return isTerminalStatus((await client.get(`${BULK}/${id}`)).body.status);
  }, `export ${id}`);
}

async function buildWorld(workspace: FixtureWorkspace): Promise<World> {
  const client = ctx.api.as(workspace);
  const slug = workspace.name.split(' ')[0]!.toLowerCase();
  const session = [...workspace.sessions].sort((a, b) => a.run_count - b.run_count)[0]!;
  const deployment = await client.post(DEPLOYMENTS, codehostBody({ workspace }, `isolation-${slug}-app`));
  expect(deployment.status).toBe(201);
  const providers = await client.get('/v2/auth/providers');
  const world: World = {
    workspace,
    client,
    slug,
    bulkExport: workspace.tier !== 'developer',
    sessionId: session.id,
    destinationId: randomUUID(),
    oneTimeExportId: randomUUID(),
    runId: randomUUID(),
    recurringExportId: randomUUID(),
    childExportId: randomUUID(),
    deploymentId: deployment.body.id,
    deploymentName: deployment.body.name,
    revisionId: deployment.body.latest_revision_id,
    integrationId: workspace.integrations[0]!.id,
    repoUrl: workspace.integrations[0]!.repos[0]!.url,
    listenerIds: workspace.listeners,
    providers: providers.body.map(({ id, provider_id }: { id: string; provider_id: string }) => ({ id, provider_id })),
  };
  if (!world.bulkExport) return world;

  const destination = await client.post(`${BULK}/destinations`, destinationBody(world));
  expect(destination.status).toBe(200);
  world.destinationId = destination.body.id;
  const exportOf = async (window: Record<string, unknown>) => {
    const created = await client.post(BULK, {
      bulk_export_destination_id: world.destinationId,
      session_id: session.id,
      ...window,
    });
    expect(created.status).toBe(200);
    return created.body.id as string;
  };
  world.oneTimeExportId = await exportOf({ start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-03T00:00:00Z' });
  // Its first two children are overdue at once; the next one is due after NOW, which the frozen clock never reaches.
  world.recurringExportId = await exportOf({ start_time: '2026-10-02T00:00:00Z', interval_hours: 24 });
  await waitForExport(client, world.oneTimeExportId);
  const children = await eventually(async () => {
    const listed = (await client.get(`${BULK}?limit=1000`)).body as {
      id: string;
      source_bulk_export_id: string | null;
      status: string;
    }[];
    const spawned = listed.filter((item) => item.source_bulk_export_id === world.recurringExportId);
    return spawned.length === 2 && spawned.every((child) => isTerminalStatus(child.status)) ? spawned : undefined;
  }, `children of ${world.recurringExportId}`);
  world.childExportId = children[0]!.id;
  const runs = await client.get(`${BULK}/${world.oneTimeExportId}/runs`);
  expect(runs.body).toHaveLength(1);
  world.runId = runs.body[0].id;
  return world;
}

beforeAll(async () => {
  expect((await ctx.admin.request('POST', '/clock/set', { body: { time: NOW } })).status).toBe(200);
  for (const workspace of ctx.fixtures.workspaces) worlds.set(workspace.tier, await buildWorld(workspace));
});

// --- requests ---------------------------------------------------------------------------

interface Reply {
  status: number;
  body: UntypedJson;
}

/** One request over node:http, so that a header can be sent twice (an array value is one header line each). */
function send(
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: unknown,
): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const allHeaders =
    payload === undefined
      ? headers
      : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, ctx.instance.apiUrl), { method, headers: allHeaders }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : undefined });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

const keyOf = (world: World) => ({ 'X-API-Key': world.workspace.api_key });
const authOf = (world: World) => ({ ...keyOf(world), 'X-Tenant-Id': world.workspace.id });

/** X-Tenant-Id values that are not exactly A's workspace id: each is 403 with A's key, whatever the path names. */
function foreignTenantHeaders(a: World, b: World): [string, string | string[]][] {
  const [own, other] = [a.workspace.id, b.workspace.id];
  return [
    ["B's id", other],
    ["B's id in upper case", other.toUpperCase()],
    ['A,B comma-joined', `${own},${other}`],
    ['B,A comma-joined', `${other},${own}`],
    ['A, B comma-joined with a space', `${own}, ${other}`],
    ['two headers A then B', [own, other]],
    ['two headers B then A', [other, own]],
    ['two headers A and A', [own, own]],
  ];
}

/** What B can see of itself through its own key: must not move while A tries. */
async function snapshot(b: World) {
  const paths = [
    `${DEPLOYMENTS}?limit=100`,
    `${DEPLOYMENTS}/${b.deploymentId}/revisions?limit=100`,
    '/v2/auth/providers',
    '/v2/listeners?limit=100',
    '/v1/integrations/forge/codehost/install',
    `/v1/integrations/forge/codehost/${b.integrationId}/repos`,
    ...(b.bulkExport
      ? [
          `${BULK}/destinations`,
          `${BULK}?limit=1000`,
          `${BULK}/${b.oneTimeExportId}/runs`,
          `${BULK}/runs?source_bulk_export_id=${b.recurringExportId}`,
        ]
      : []),
  ];
  return Promise.all(
    paths.map(async (path) => {
      const response = await b.client.get(path);
      return { path, status: response.status, body: response.body };
    }),
  );
}

/**
 * Asserts that B's view did not move: compared as JSON text first (deep equality over every list is most of this file's
 * time), deeply for the diff when it differs.
 */
function expectUnchanged(now: unknown, before: unknown, what: string): void {
  if (JSON.stringify(now) !== JSON.stringify(before)) expect(now, what).toEqual(before);
}

/** B's tracing projects with their run counts, which only the fixtures knob shows (slower: read before and after). */
async function tracingProjects(b: World) {
  const fixtures = await ctx.admin.request('GET', '/fixtures');
  return fixtures.body.workspaces.find((workspace: { id: string }) => workspace.id === b.workspace.id).sessions;
}

// --- the table --------------------------------------------------------------------------

interface RequestSpec {
  method?: string;
  path: string;
  body?: unknown;
}

/** A's request at something of B (or naming B): the answer it must get. */
interface Attempt extends RequestSpec {
  what: string;
  status: number;
  detail?: unknown;
  check?: (body: UntypedJson) => void;
}

/** A's request at its own things, allowed: what an upper-case X-Tenant-Id of A must still reach. */
interface OwnRequest extends RequestSpec {
  status: number;
  /** Waits for background work the request started, so that A is settled when it is watched as B. */
  settle?: (body: UntypedJson) => Promise<void>;
}

interface EndpointCase {
  method: string;
  route: string;
  own: (a: World) => Promise<OwnRequest>;
  foreign: (a: World, b: World) => Promise<Attempt[]>;
}

const notFound = (detail: string) => ({ status: 404, detail });
const ids = (body: { id: string }[]) => body.map((item) => item.id);

async function newDeployment(a: World): Promise<string> {
  const created = await a.client.post(DEPLOYMENTS, codehostBody(a, unique(`isolation-${a.slug}-temp`)));
  expect(created.status).toBe(201);
  return created.body.id;
}

async function newDestination(a: World): Promise<string> {
  const created = await a.client.post(`${BULK}/destinations`, destinationBody(a));
  expect(created.status).toBe(200);
  return created.body.id;
}

const LISTENERS = '/v2/listeners';
const PROVIDERS = '/v2/auth/providers';
const listenersRefused = (a: World) =>
  `Listeners cannot be created for the service workspace ID '${a.workspace.id}'. Creating listeners is only ` +
  `allowed for the service organizations with self-hosted enterprise plans.`;
/**
 * What A gets for a call naming a listener: a workspace that is not self-hosted is refused them before any id is looked
 * at.
 */
const listenerAnswer = (a: World, answer: { status: number; detail?: unknown }) =>
  a.workspace.self_hosted ? answer : { status: 403, detail: listenersRefused(a) };
const listenerBody = (a: World) => ({
  compute_type: 'k8s',
  compute_id: unique(`isolation-${a.slug}-cluster`),
  compute_config: { k8s_namespaces: ['graphs'] },
});

async function newListener(a: World): Promise<string> {
  if (!a.workspace.self_hosted) return randomUUID();
  const created = await a.client.post(LISTENERS, listenerBody(a));
  expect(created.status).toBe(201);
  return created.body.id;
}

const providerBody = (a: World) => ({
  provider_id: unique(`isolation-${a.slug}-provider`),
  name: 'Isolation provider',
  client_id: 'isolation-client',
  client_secret: 'isolation-client-secret',
  auth_url: 'https://isolation.example/authorize',
  token_url: 'https://isolation.example/token',
});

async function newProvider(a: World): Promise<string> {
  const created = await a.client.post(PROVIDERS, providerBody(a));
  expect(created.status).toBe(200);
  return created.body.provider_id;
}

/** B's providers by provider_id (those A has no namesake of) and by record id: each is 404 to A. */
const foreignProviderPaths = (a: World, b: World) =>
  b.providers.flatMap(({ id, provider_id }) => [
    ...(a.providers.some((provider) => provider.provider_id === provider_id) ? [] : [provider_id]),
    id,
  ]);

/** A one-time export of a window without runs: it completes at once, writing nothing. */
const emptyExport = (a: World, destinationId = a.destinationId, sessionId = a.sessionId) => ({
  bulk_export_destination_id: destinationId,
  session_id: sessionId,
  start_time: '2026-09-01T00:00:00Z',
  end_time: '2026-09-02T00:00:00Z',
});

/** Bodies of a deployment create naming each of B's listeners. */
const listenerCreates = (a: World, b: World): Attempt[] =>
  b.listenerIds.map((listenerId) => ({
    what: "create with B's listener",
    path: DEPLOYMENTS,
    body: {
      ...codehostBody(a, unique(`isolation-${a.slug}-listener`)),
      source: a.workspace.self_hosted ? 'external_container' : 'internal_container',
      source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'default' } },
      source_revision_config: { image_uri: 'registry.example/agent:1' },
    },
    status: 400,
    detail: `Source configuration error: listener_id ${listenerId} is not a listener of this workspace.`,
  }));

const ENDPOINTS: EndpointCase[] = [
  {
    method: 'GET',
    route: `${BULK}/destinations`,
    own: async () => ({ path: `${BULK}/destinations`, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "A's list holds only A's destinations",
        path: `${BULK}/destinations`,
        status: 200,
        check: (body) => {
          expect(ids(body)).not.toContain(b.destinationId);
          for (const item of body) expect(item.tenant_id).toBe(a.workspace.id);
        },
      },
    ],
  },
  {
    method: 'POST',
    route: `${BULK}/destinations`,
    own: async (a) => ({ path: `${BULK}/destinations`, body: destinationBody(a), status: 200 }),
    foreign: async (a, b) => [
      {
        what: 'tenant_id of B in the body makes a destination of A',
        path: `${BULK}/destinations`,
        body: { ...destinationBody(a), tenant_id: b.workspace.id },
        status: 200,
        check: (body) => expect(body.tenant_id).toBe(a.workspace.id),
      },
    ],
  },
  {
    method: 'GET',
    route: `${BULK}/destinations/:destination_id`,
    own: async (a) => ({ path: `${BULK}/destinations/${a.destinationId}`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's destination",
        path: `${BULK}/destinations/${b.destinationId}`,
        ...notFound(`Bulk export destination ${b.destinationId} not found`),
      },
    ],
  },
  {
    method: 'PATCH',
    route: `${BULK}/destinations/:destination_id`,
    own: async (a) => ({
      path: `${BULK}/destinations/${a.destinationId}`,
      body: { credentials: credentialsOf(fullKey(ctx.fixtures)) },
      status: 200,
    }),
    foreign: async (_a, b) => [
      {
        what: "rotating B's destination (to a pair with a session token, which B's credentials_keys would show)",
        path: `${BULK}/destinations/${b.destinationId}`,
        body: { credentials: { ...credentialsOf(fullKey(ctx.fixtures)), session_token: 'isolation-session-token' } },
        ...notFound(`Bulk export destination ${b.destinationId} not found`),
      },
    ],
  },
  {
    method: 'DELETE',
    route: `${BULK}/destinations/:destination_id`,
    own: async (a) => ({
      path: `${BULK}/destinations/${a.bulkExport ? await newDestination(a) : randomUUID()}`,
      status: 204,
    }),
    foreign: async (_a, b) => [
      {
        what: "B's destination",
        path: `${BULK}/destinations/${b.destinationId}`,
        ...notFound(`Bulk export destination ${b.destinationId} not found`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${BULK}/runs`,
    own: async (a) => ({ path: `${BULK}/runs?source_bulk_export_id=${a.recurringExportId}`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "source_bulk_export_id of B's recurring export",
        path: `${BULK}/runs?source_bulk_export_id=${b.recurringExportId}`,
        ...notFound(`Bulk export ${b.recurringExportId} not found`),
      },
      {
        what: "source_bulk_export_id of B's one-time export",
        path: `${BULK}/runs?source_bulk_export_id=${b.oneTimeExportId}`,
        ...notFound(`Bulk export ${b.oneTimeExportId} not found`),
      },
    ],
  },
  {
    method: 'GET',
    route: BULK,
    own: async () => ({ path: BULK, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "A's list holds only A's exports",
        path: `${BULK}?limit=1000`,
        status: 200,
        check: (body) => {
          for (const id of [b.oneTimeExportId, b.recurringExportId, b.childExportId])
            expect(ids(body)).not.toContain(id);
          for (const item of body) expect(item.tenant_id).toBe(a.workspace.id);
        },
      },
    ],
  },
  {
    method: 'POST',
    route: BULK,
    own: async (a) => ({
      path: BULK,
      body: emptyExport(a),
      status: 200,
      settle: (body) => waitForExport(a.client, body.id),
    }),
    foreign: async (a, b) => [
      {
        what: "B's destination",
        path: BULK,
        body: emptyExport(a, b.destinationId),
        ...notFound(`Bulk export destination ${b.destinationId} not found`),
      },
      {
        what: "B's session",
        path: BULK,
        body: emptyExport(a, a.destinationId, b.sessionId),
        ...notFound(`Session ${b.sessionId} not found`),
      },
      {
        what: "B's destination and session",
        path: BULK,
        body: emptyExport(a, b.destinationId, b.sessionId),
        ...notFound(`Bulk export destination ${b.destinationId} not found`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${BULK}/:bulk_export_id`,
    own: async (a) => ({ path: `${BULK}/${a.oneTimeExportId}`, status: 200 }),
    foreign: async (_a, b) =>
      [b.oneTimeExportId, b.recurringExportId, b.childExportId].map((id) => ({
        what: "B's export",
        path: `${BULK}/${id}`,
        ...notFound(`Bulk export ${id} not found`),
      })),
  },
  {
    method: 'PATCH',
    route: `${BULK}/:bulk_export_id`,
    own: async (a) => {
      if (!a.bulkExport) return { path: `${BULK}/${randomUUID()}`, body: { status: 'Cancelled' }, status: 200 };
      // Its first child would be due after NOW: nothing runs in the background.
      const created = await a.client.post(BULK, {
        ...emptyExport(a),
        end_time: null,
        start_time: NOW,
        interval_hours: 24,
      });
      expect(created.status).toBe(200);
      return { path: `${BULK}/${created.body.id}`, body: { status: 'Cancelled' }, status: 200 };
    },
    foreign: async (_a, b) =>
      [b.recurringExportId, b.childExportId].map((id) => ({
        what: "cancelling B's export",
        path: `${BULK}/${id}`,
        body: { status: 'Cancelled' },
        ...notFound(`Bulk export ${id} not found`),
      })),
  },
  {
    method: 'GET',
    route: `${BULK}/:bulk_export_id/runs`,
    own: async (a) => ({ path: `${BULK}/${a.oneTimeExportId}/runs`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's export",
        path: `${BULK}/${b.oneTimeExportId}/runs`,
        ...notFound(`Bulk export ${b.oneTimeExportId} not found`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${BULK}/:bulk_export_id/runs/:run_id`,
    own: async (a) => ({ path: `${BULK}/${a.oneTimeExportId}/runs/${a.runId}`, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "B's export and run",
        path: `${BULK}/${b.oneTimeExportId}/runs/${b.runId}`,
        ...notFound(`Bulk export ${b.oneTimeExportId} not found`),
      },
      {
        what: "B's run under A's export",
        path: `${BULK}/${a.oneTimeExportId}/runs/${b.runId}`,
        ...notFound(`Bulk export run ${b.runId} not found`),
      },
    ],
  },
  {
    method: 'GET',
    route: DEPLOYMENTS,
    own: async () => ({ path: `${DEPLOYMENTS}?limit=5`, status: 200 }),
    foreign: async (a, b) => [
      {
        what: 'deployment_ids of B',
        path: `${DEPLOYMENTS}?deployment_ids=${b.deploymentId}`,
        status: 200,
        check: (body) => expect(body.resources).toEqual([]),
      },
      {
        what: 'deployment_ids of A and B, comma-separated',
        path: `${DEPLOYMENTS}?deployment_ids=${a.deploymentId},${b.deploymentId}`,
        status: 200,
        check: (body) => expect(ids(body.resources)).toEqual([a.deploymentId]),
      },
      {
        what: 'deployment_ids of B and A, repeated',
        path: `${DEPLOYMENTS}?deployment_ids=${b.deploymentId}&deployment_ids=${a.deploymentId}`,
        status: 200,
        check: (body) => expect(ids(body.resources)).toEqual([a.deploymentId]),
      },
      {
        what: "name_contains of B's name",
        path: `${DEPLOYMENTS}?name_contains=${b.deploymentName}`,
        status: 200,
        check: (body) =>
          expect(body.resources.filter((item: { tenant_id: string }) => item.tenant_id !== a.workspace.id)).toEqual([]),
      },
      {
        what: "A's list holds only A's deployments",
        path: `${DEPLOYMENTS}?limit=100`,
        status: 200,
        check: (body) => {
          for (const item of body.resources) expect(item.tenant_id).toBe(a.workspace.id);
          expect(ids(body.resources)).not.toContain(b.deploymentId);
        },
      },
    ],
  },
  {
    method: 'POST',
    route: DEPLOYMENTS,
    own: async (a) => ({ path: DEPLOYMENTS, body: codehostBody(a, unique(`isolation-${a.slug}-own`)), status: 201 }),
    foreign: async (a, b) => [
      {
        what: "B's integration and repository",
        path: DEPLOYMENTS,
        body: {
          ...codehostBody(a, unique(`isolation-${a.slug}-integration`)),
          source_config: { integration_id: b.integrationId, repo_url: b.repoUrl, deployment_type: 'dev' },
        },
        status: 400,
        detail:
          `Source configuration error: integration_id ${b.integrationId} is not a codehost integration of ` +
          `this workspace.`,
      },
      {
        what: "B's repository under A's integration",
        path: DEPLOYMENTS,
        body: {
          ...codehostBody(a, unique(`isolation-${a.slug}-repo`)),
          source_config: { integration_id: a.integrationId, repo_url: b.repoUrl, deployment_type: 'dev' },
        },
        status: 400,
        detail:
          `Source configuration error: repo_url ${b.repoUrl} is not a repository of ` +
          `integration ${a.integrationId}.`,
      },
      ...listenerCreates(a, b),
      {
        what: "the name of B's deployment and tracing project, with tenant_id of B: a deployment of A",
        path: DEPLOYMENTS,
        body: { ...codehostBody(a, b.deploymentName), tenant_id: b.workspace.id },
        status: 201,
        check: (body) => expect(body).toMatchObject({ name: b.deploymentName, tenant_id: a.workspace.id }),
      },
    ],
  },
  {
    method: 'DELETE',
    route: DEPLOYMENTS,
    own: async (a) => ({ path: `${DEPLOYMENTS}?deployment_ids=${await newDeployment(a)}`, status: 200 }),
    foreign: async (a, b) => {
      const temporary = await newDeployment(a);
      return [
        {
          what: 'deployment_ids of B',
          path: `${DEPLOYMENTS}?deployment_ids=${b.deploymentId}`,
          status: 207,
          check: (body) =>
            expect(body.results).toEqual([
              { deployment_id: b.deploymentId, deleted: false, detail: `Deployment ID ${b.deploymentId} not found.` },
            ]),
        },
        {
          what: 'deployment_ids of A and B',
          path: `${DEPLOYMENTS}?deployment_ids=${temporary},${b.deploymentId}`,
          status: 207,
          check: (body) =>
            expect(body.results).toEqual([
              { deployment_id: temporary, deleted: true },
              { deployment_id: b.deploymentId, deleted: false, detail: `Deployment ID ${b.deploymentId} not found.` },
            ]),
        },
      ];
    },
  },
  {
    method: 'DELETE',
    route: `${DEPLOYMENTS}/:deployment_id`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${await newDeployment(a)}`, status: 204 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
      {
        what: "B's deployment with its tracing project",
        path: `${DEPLOYMENTS}/${b.deploymentId}?delete_tracing_project=true`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${DEPLOYMENTS}/:deployment_id`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'PATCH',
    route: `${DEPLOYMENTS}/:deployment_id`,
    own: async (a) => ({
      path: `${DEPLOYMENTS}/${a.deploymentId}`,
      body: { source_config: { build_on_push: false } },
      status: 200,
    }),
    foreign: async (a, b) => [
      {
        what: "new secrets for B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}`,
        body: { secrets: [{ name: 'API_TOKEN', value: 'isolation-test-other' }] },
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
      {
        what: "B's integration on A's deployment",
        path: `${DEPLOYMENTS}/${a.deploymentId}`,
        body: { source_config: { integration_id: b.integrationId } },
        status: 400,
        detail: 'integration_id cannot be changed once the deployment is created.',
      },
      {
        what: "B's repository on A's deployment",
        path: `${DEPLOYMENTS}/${a.deploymentId}`,
        body: { source_config: { repo_url: b.repoUrl } },
        status: 400,
        detail: 'repo_url cannot be changed once the deployment is created.',
      },
      ...b.listenerIds.map((listenerId) => ({
        what: "B's listener on A's deployment",
        path: `${DEPLOYMENTS}/${a.deploymentId}`,
        body: { source_config: { listener_id: listenerId } },
        status: 400,
        detail: 'listener_id cannot be changed once the deployment is created.',
      })),
    ],
  },
  {
    method: 'POST',
    route: `${DEPLOYMENTS}/:deployment_id/revisions/:revision_id/redeploy`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/revisions/${a.revisionId}/redeploy`, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "B's deployment and revision",
        path: `${DEPLOYMENTS}/${b.deploymentId}/revisions/${b.revisionId}/redeploy`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
      {
        what: "B's revision under A's deployment",
        path: `${DEPLOYMENTS}/${a.deploymentId}/revisions/${b.revisionId}/redeploy`,
        ...notFound(`Revision ID ${b.revisionId} not found.`),
      },
    ],
  },
  {
    method: 'POST',
    route: `${DEPLOYMENTS}/:deployment_id/revisions`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/revisions`, body: {}, status: 201 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}/revisions`,
        body: {},
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'POST',
    route: `${DEPLOYMENTS}/:deployment_id/push-token`,
    // A codehost deployment has no registry repository: A's own is refused too, with a 400.
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/push-token`, status: 400 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}/push-token`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'POST',
    route: `${DEPLOYMENTS}/:deployment_id/upload-url`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/upload-url`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}/upload-url`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  ...(['build_logs', 'deploy_logs'] as const).map((stream): EndpointCase => ({
    method: 'POST',
    route: `/v1/projects/:project_id/revisions/:revision_id/${stream}`,
    own: async (a) => ({
      path: `/v1/projects/${a.deploymentId}/revisions/${a.revisionId}/${stream}`,
      body: {},
      status: 200,
    }),
    foreign: async (a, b) => [
      {
        what: "B's deployment and revision",
        path: `/v1/projects/${b.deploymentId}/revisions/${b.revisionId}/${stream}`,
        body: {},
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
      {
        what: "B's revision under A's deployment",
        path: `/v1/projects/${a.deploymentId}/revisions/${b.revisionId}/${stream}`,
        body: {},
        ...notFound(`Revision ID ${b.revisionId} not found.`),
      },
    ],
  })),
  {
    method: 'POST',
    route: '/v1/projects/:project_id/deploy_logs',
    own: async (a) => ({ path: `/v1/projects/${a.deploymentId}/deploy_logs`, body: {}, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `/v1/projects/${b.deploymentId}/deploy_logs`,
        body: {},
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${DEPLOYMENTS}/:deployment_id/revisions`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/revisions`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's deployment",
        path: `${DEPLOYMENTS}/${b.deploymentId}/revisions`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
    ],
  },
  {
    method: 'GET',
    route: `${DEPLOYMENTS}/:deployment_id/revisions/:revision_id`,
    own: async (a) => ({ path: `${DEPLOYMENTS}/${a.deploymentId}/revisions/${a.revisionId}`, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "B's deployment and revision",
        path: `${DEPLOYMENTS}/${b.deploymentId}/revisions/${b.revisionId}`,
        ...notFound(`Deployment ID ${b.deploymentId} not found.`),
      },
      {
        what: "B's revision under A's deployment",
        path: `${DEPLOYMENTS}/${a.deploymentId}/revisions/${b.revisionId}`,
        ...notFound(`Revision ID ${b.revisionId} not found.`),
      },
    ],
  },
  {
    method: 'GET',
    route: '/v2/auth/providers',
    own: async () => ({ path: '/v2/auth/providers', status: 200 }),
    foreign: async (a, b) => [
      {
        what: "A's list holds only A's providers",
        path: '/v2/auth/providers',
        status: 200,
        check: (body) => {
          expect(ids(body)).toEqual(expect.arrayContaining(ids(a.providers)));
          for (const provider of b.providers) expect(ids(body)).not.toContain(provider.id);
        },
      },
    ],
  },
  {
    method: 'GET',
    route: '/v2/auth/providers/:provider_id',
    own: async (a) => ({ path: `/v2/auth/providers/${a.providers[0]!.provider_id}`, status: 200 }),
    foreign: async (a, b) =>
      b.providers.flatMap(({ id, provider_id }) => {
        const ownNamesake = a.providers.find((provider) => provider.provider_id === provider_id);
        return [
          ownNamesake
            ? {
                what: "a provider_id both have: A's own",
                path: `/v2/auth/providers/${provider_id}`,
                status: 200,
                check: (body: { id: string }) => expect(body.id).toBe(ownNamesake.id),
              }
            : {
                what: "B's provider_id",
                path: `/v2/auth/providers/${provider_id}`,
                ...notFound(`OAuth provider ${provider_id} not found.`),
              },
          {
            what: "B's provider record id",
            path: `/v2/auth/providers/${id}`,
            ...notFound(`OAuth provider ${id} not found.`),
          },
        ];
      }),
  },
  {
    method: 'POST',
    route: PROVIDERS,
    own: async (a) => ({ path: PROVIDERS, body: providerBody(a), status: 200 }),
    foreign: async (a, b) => [
      {
        what: 'tenant_id of B in the body makes a provider of A',
        path: PROVIDERS,
        body: { ...providerBody(a), tenant_id: b.workspace.id, organization_id: b.workspace.id },
        status: 200,
        check: (body) => expect(body.organization_id).not.toBe(b.workspace.id),
      },
    ],
  },
  {
    method: 'POST',
    route: `${PROVIDERS}/mcp-discover`,
    own: async (a) => ({
      path: `${PROVIDERS}/mcp-discover`,
      body: {
        provider_id: unique(`isolation-${a.slug}-mcp`),
        name: 'MCP',
        mcp_server_url: 'https://mcp.crm.example/mcp',
      },
      status: 200,
    }),
    foreign: async (a, b) => [
      {
        what: 'tenant_id of B in the body makes a provider of A',
        path: `${PROVIDERS}/mcp-discover`,
        body: {
          provider_id: unique(`isolation-${a.slug}-mcp`),
          name: 'MCP',
          mcp_server_url: 'https://papers.globex.example/mcp',
          tenant_id: b.workspace.id,
        },
        status: 200,
        check: (body) => expect(ids(b.providers)).not.toContain(body.id),
      },
    ],
  },
  {
    method: 'PATCH',
    route: `${PROVIDERS}/:provider_id`,
    own: async (a) => ({
      path: `${PROVIDERS}/${a.providers[0]!.provider_id}`,
      body: { name: 'Renamed by its own workspace' },
      status: 200,
    }),
    foreign: async (a, b) =>
      foreignProviderPaths(a, b).map((providerId) => ({
        what: "renaming B's provider and replacing its secret",
        path: `${PROVIDERS}/${providerId}`,
        body: { name: 'taken over', client_secret: 'isolation-other-secret' },
        ...notFound(`OAuth provider ${providerId} not found.`),
      })),
  },
  {
    method: 'DELETE',
    route: `${PROVIDERS}/:provider_id`,
    own: async (a) => ({ path: `${PROVIDERS}/${await newProvider(a)}`, status: 200 }),
    foreign: async (a, b) =>
      foreignProviderPaths(a, b).map((providerId) => ({
        what: "B's provider",
        path: `${PROVIDERS}/${providerId}`,
        ...notFound(`OAuth provider ${providerId} not found.`),
      })),
  },
  {
    method: 'GET',
    route: LISTENERS,
    own: async () => ({ path: LISTENERS, status: 200 }),
    foreign: async (a, b) => [
      {
        what: "A's list holds only A's listeners",
        path: `${LISTENERS}?limit=100`,
        status: 200,
        check: (body) => {
          for (const listenerId of b.listenerIds) expect(ids(body.resources)).not.toContain(listenerId);
          expect(ids(body.resources)).toEqual(expect.arrayContaining(a.listenerIds));
        },
      },
    ],
  },
  {
    method: 'POST',
    route: LISTENERS,
    own: async (a) => ({ path: LISTENERS, body: listenerBody(a), status: a.workspace.self_hosted ? 201 : 403 }),
    foreign: async (a, b) => [
      {
        what: 'tenant_id of B in the body makes a listener of A, or none',
        path: LISTENERS,
        body: { ...listenerBody(a), tenant_id: b.workspace.id },
        ...listenerAnswer(a, { status: 201 }),
      },
    ],
  },
  {
    method: 'GET',
    route: `${LISTENERS}/:listener_id`,
    own: async (a) => ({
      path: `${LISTENERS}/${a.listenerIds[0] ?? randomUUID()}`,
      status: a.workspace.self_hosted ? 200 : 403,
    }),
    foreign: async (a, b) =>
      [...b.listenerIds, randomUUID()].map((listenerId) => ({
        what: "B's listener (or none)",
        path: `${LISTENERS}/${listenerId}`,
        ...listenerAnswer(a, notFound(`Listener ID ${listenerId} not found.`)),
      })),
  },
  {
    method: 'PATCH',
    route: `${LISTENERS}/:listener_id`,
    own: async (a) => ({
      path: `${LISTENERS}/${a.listenerIds[0] ?? randomUUID()}`,
      body: { version: '9.9.9' },
      status: a.workspace.self_hosted ? 200 : 403,
    }),
    foreign: async (a, b) =>
      [...b.listenerIds, randomUUID()].map((listenerId) => ({
        what: "B's listener (or none)",
        path: `${LISTENERS}/${listenerId}`,
        body: { version: 'taken-over', compute_config: { k8s_namespaces: ['elsewhere'] } },
        ...listenerAnswer(a, notFound(`Listener ID ${listenerId} not found.`)),
      })),
  },
  {
    method: 'DELETE',
    route: `${LISTENERS}/:listener_id`,
    own: async (a) => ({ path: `${LISTENERS}/${await newListener(a)}`, status: a.workspace.self_hosted ? 204 : 403 }),
    foreign: async (a, b) =>
      [...b.listenerIds, randomUUID()].map((listenerId) => ({
        what: "B's listener (or none)",
        path: `${LISTENERS}/${listenerId}`,
        ...listenerAnswer(a, notFound(`Listener ID ${listenerId} not found.`)),
      })),
  },
  {
    method: 'GET',
    route: '/v1/integrations/forge/codehost/install',
    own: async () => ({ path: '/v1/integrations/forge/codehost/install', status: 200 }),
    foreign: async (a) => [
      {
        what: "A's list holds only A's integrations",
        path: '/v1/integrations/forge/codehost/install',
        status: 200,
        check: (body) => expect(ids(body)).toEqual(a.workspace.integrations.map((integration) => integration.id)),
      },
    ],
  },
  {
    method: 'GET',
    route: '/v1/integrations/forge/codehost/:integration_id/repos',
    own: async (a) => ({ path: `/v1/integrations/forge/codehost/${a.integrationId}/repos`, status: 200 }),
    foreign: async (_a, b) => [
      {
        what: "B's integration",
        path: `/v1/integrations/forge/codehost/${b.integrationId}/repos`,
        ...notFound(`Codehost integration ID ${b.integrationId} not found.`),
      },
    ],
  },
];

// --- the tests --------------------------------------------------------------------------

const PAIRS = [
  ['plus', 'enterprise'],
  ['enterprise', 'plus'],
  ['developer', 'plus'],
  ['developer', 'enterprise'],
] as const;

const isBulkExport = (endpoint: EndpointCase) => endpoint.route.startsWith(BULK);

/** What A gets for a request: the plan gate first, on a tier without bulk export. */
function expected(
  a: World,
  endpoint: EndpointCase,
  answer: { status: number; detail?: unknown; check?: (body: UntypedJson) => void },
) {
  return isBulkExport(endpoint) && !a.bulkExport ? { status: 403, detail: PLAN_GATE } : answer;
}

function expectAnswer(
  reply: Reply,
  answer: { status: number; detail?: unknown; check?: (body: UntypedJson) => void },
  what: string,
) {
  expect(reply.status, what).toBe(answer.status);
  if (answer.detail !== undefined) expect(reply.body, what).toEqual({ detail: answer.detail });
  answer.check?.(reply.body);
}

describe.each(PAIRS)('a key of the %s workspace (A) against the %s workspace (B)', (attackerTier, victimTier) => {
  const a = () => worlds.get(attackerTier)!;
  const b = () => worlds.get(victimTier)!;

  it.each(ENDPOINTS.map((endpoint) => [`${endpoint.method} ${endpoint.route}`, endpoint] as const))(
    '%s',
    async (_name, endpoint) => {
      const before = await snapshot(b());
      const projectsBefore = await tracingProjects(b());
      const attempts = await endpoint.foreign(a(), b());
      expect(attempts.length).toBeGreaterThan(0);

      for (const attempt of attempts) {
        const reply = await send(attempt.method ?? endpoint.method, attempt.path, authOf(a()), attempt.body);
        expectAnswer(reply, expected(a(), endpoint, attempt), `${attempt.what}: ${attempt.path}`);
        expectUnchanged(await snapshot(b()), before, `B after ${attempt.what}`);
      }

      const first = attempts[0]!;
      for (const [what, tenant] of foreignTenantHeaders(a(), b())) {
        const reply = await send(
          first.method ?? endpoint.method,
          first.path,
          { ...keyOf(a()), 'X-Tenant-Id': tenant },
          first.body,
        );
        expectAnswer(reply, { status: 403, detail: FORBIDDEN }, `X-Tenant-Id ${what}`);
      }
      expectUnchanged(await snapshot(b()), before, 'B after the X-Tenant-Id variants');

      const own = await endpoint.own(a());
      const reply = await send(
        own.method ?? endpoint.method,
        own.path,
        { ...keyOf(a()), 'X-Tenant-Id': a().workspace.id.toUpperCase() },
        own.body,
      );
      const ownAnswer = expected(a(), endpoint, { status: own.status });
      expectAnswer(reply, ownAnswer, `A's own request with its id in upper case: ${own.path}`);
      if (ownAnswer.status === own.status) await own.settle?.(reply.body);
      expectUnchanged(await snapshot(b()), before, "B after A's own request");
      expect(await tracingProjects(b())).toEqual(projectsBefore);
    },
  );
});

describe('the endpoint table', () => {
  it('covers every route of every API family', () => {
    // Every route but the harness's own (/_localplane), the served reference (/openapi.json, /docs) and /info (one
    // answer for everyone).
    const routes = ctx.instance.routes
      .filter((route) => !/^\/(_localplane|openapi\.json|docs|info|api\/v1\/info)(\/|$)/.test(route.path))
      .map((route) => `${route.method} ${route.path}`);
    expect(routes.length).toBeGreaterThan(0);
    expect(ENDPOINTS.map((endpoint) => `${endpoint.method} ${endpoint.route}`).sort()).toEqual(
      [...new Set(routes)].sort(),
    );
  });

  it('gives each workspace of the fixtures a world, with something of each kind to reach for', () => {
    expect([...worlds.keys()].sort()).toEqual(['developer', 'enterprise', 'plus']);
    expect(workspaceByTier(ctx.fixtures, 'enterprise').listeners.length).toBeGreaterThan(0);
    for (const world of worlds.values()) {
      expect(world.providers.length).toBeGreaterThan(0);
      expect(world.integrationId).toEqual(expect.any(String));
    }
  });
});
