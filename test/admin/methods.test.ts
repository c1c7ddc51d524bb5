// Every admin action as a method: on an in-process instance and through connect(url), each
// method a request to its route under /_localplane, answering what that route answers.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  createLocalplane,
  LocalplaneError,
  start,
  type AdminMethods,
  type FixturesView,
  type InProcessLocalplane,
  type Localplane,
  type LocalplaneClient,
} from '../../src/index.ts';
import { s3For } from '../support/objstore.ts';

/** Requests to the harness that no method makes: a stream (read it with EventSource) and the journal's older alias. */
const WITHOUT_METHOD = ['GET /_localplane/requests/stream', 'GET /_localplane/objstore/journal'];

interface Ids {
  workspace: string;
  session: string;
  deployment: string;
  revision: string;
  bucket: string;
  key: string;
}

interface Step {
  /** The route the step's call reaches, as `lp.routes` names it. */
  route: string;
  call: (api: AdminMethods, ids: Ids) => Promise<unknown>;
  /** The status of the LocalplaneError the call is expected to throw (the route reached, its answer an error). */
  fails?: number;
}

const SNAPSHOT = 'methods.snapshot';

/** Calls of the admin methods every instance has, in an order where each finds what it needs. */
const ADMIN_STEPS: Step[] = [
  { route: 'GET /_localplane/health', call: (api) => api.health() },
  { route: 'GET /_localplane/fixtures', call: (api) => api.fixtures() },
  { route: 'GET /_localplane/tasks', call: (api) => api.tasks() },
  { route: 'GET /_localplane/config', call: (api) => api.config.get() },
  { route: 'PATCH /_localplane/config', call: (api) => api.config.patch({ export_run_max_retries: 1 }) },
  {
    route: 'POST /_localplane/faults/destination-validations',
    call: (api) => api.faults.destinationValidations({ error: 'access_denied', count: 2 }),
  },
  {
    route: 'POST /_localplane/faults/export-runs',
    call: (api) => api.faults.exportRuns({ mode: 'slow', delay_seconds: 5 }),
  },
  {
    route: 'POST /_localplane/faults/revisions',
    call: (api, ids) => api.faults.revisions({ stage: 'build', deployment_id: ids.deployment }),
  },
  { route: 'GET /_localplane/faults', call: (api) => api.faults.list() },
  { route: 'DELETE /_localplane/faults', call: (api) => api.faults.clear() },
  {
    route: 'PUT /_localplane/workspaces/:workspace_id/tier',
    call: (api, ids) => api.workspaces.setTier(ids.workspace, { tier: 'enterprise' }),
  },
  {
    route: 'POST /_localplane/sessions/:session_id/runs',
    call: (api, ids) => api.sessions.addRuns(ids.session, { count: 3, start_time: '2026-01-01T00:00:00Z' }),
  },
  {
    route: 'PUT /_localplane/deployments/:deployment_id/status',
    call: (api, ids) => api.deployments.setStatus(ids.deployment, { status: 'UNUSED' }),
  },
  {
    route: 'PUT /_localplane/deployments/:deployment_id/revisions/:revision_id/status',
    call: (api, ids) => api.deployments.setRevisionStatus(ids.deployment, ids.revision, { status: 'BUILD_FAILED' }),
  },
  {
    route: 'GET /_localplane/deployments/:deployment_id/revisions/:revision_id/history',
    call: (api, ids) => api.deployments.revisionHistory(ids.deployment, ids.revision),
  },
  {
    route: 'POST /_localplane/objstore/keys',
    call: (api) =>
      api.objstore.keys.add({
        access_key_id: 'METHODKEY0000000001',
        secret_access_key: 'method-secret',
        permissions: ['get'],
      }),
  },
  { route: 'GET /_localplane/objstore/keys', call: (api) => api.objstore.keys.list() },
  {
    route: 'DELETE /_localplane/objstore/keys/:access_key_id',
    call: (api) => api.objstore.keys.remove('METHODKEY0000000001'),
  },
  { route: 'GET /_localplane/objstore/buckets', call: (api) => api.objstore.buckets() },
  {
    route: 'GET /_localplane/objstore/buckets/:bucket/objects',
    call: (api, ids) => api.objstore.objects(ids.bucket, { prefix: 'methods/', limit: 10 }),
  },
  {
    route: 'GET /_localplane/objstore/buckets/:bucket/object',
    call: (api, ids) => api.objstore.object(ids.bucket, ids.key),
  },
  {
    route: 'GET /_localplane/objstore/buckets/:bucket/object/content',
    call: async (api, ids) => Buffer.from(await api.objstore.content(ids.bucket, ids.key)).toString(),
  },
  {
    route: 'GET /_localplane/objstore/preview',
    call: (api, ids) => api.objstore.preview({ bucket: ids.bucket, key: ids.key, rows: 5 }),
  },
  {
    route: 'PUT /_localplane/objstore/buckets/:bucket/object',
    call: (api, ids) =>
      api.objstore.putObject(ids.bucket, 'methods/put.json', new TextEncoder().encode('{"put": true}'), {
        contentType: 'application/json',
      }),
  },
  {
    route: 'DELETE /_localplane/objstore/buckets/:bucket/object',
    call: (api, ids) => api.objstore.deleteObject(ids.bucket, 'methods/put.json'),
  },
  { route: 'POST /_localplane/snapshot', call: (api) => api.snapshots.save(SNAPSHOT) },
  { route: 'GET /_localplane/snapshots', call: (api) => api.snapshots.list() },
  {
    route: 'GET /_localplane/snapshots/:name',
    call: async (api) => (await api.snapshots.download(SNAPSHOT)).byteLength > 0,
  },
  {
    route: 'PUT /_localplane/snapshots/:name',
    call: async (api) => {
      const copy = await api.snapshots.upload('copy.snapshot', await api.snapshots.download(SNAPSHOT));
      return copy.name;
    },
  },
  { route: 'DELETE /_localplane/snapshots/:name', call: (api) => api.snapshots.delete('copy.snapshot') },
  { route: 'POST /_localplane/restore', call: (api) => api.snapshots.restore(SNAPSHOT) },
  { route: 'GET /_localplane/state', call: (api, ids) => api.state({ workspace_id: ids.workspace }) },
  // No export of that id: the route answers its 404.
  {
    route: 'POST /_localplane/sql',
    call: (api) => api.sql({ sql: 'SELECT 1', export_id: '00000000-0000-4000-8000-000000000000' }),
    fails: 404,
  },
];

/**
 * Calls of what a connect()ed client has as an in-process instance has it in its own way: reset, the clock, the journal
 * and the fault rules.
 */
const CLIENT_STEPS: { route: string; call: (client: LocalplaneClient) => Promise<unknown> }[] = [
  { route: 'POST /_localplane/reset', call: (client) => client.reset({ keepClock: true }) },
  { route: 'GET /_localplane/clock', call: (client) => client.clock.get() },
  { route: 'POST /_localplane/clock/freeze', call: (client) => client.clock.freeze() },
  { route: 'POST /_localplane/clock/set', call: (client) => client.clock.set(new Date('2030-01-01T00:00:00Z')) },
  { route: 'POST /_localplane/clock/advance', call: (client) => client.clock.advance(30) },
  { route: 'POST /_localplane/clock/advance-to-next', call: (client) => client.clock.advanceToNext() },
  {
    route: 'POST /_localplane/clock/run-until-idle',
    call: (client) => client.clock.runUntilIdle({ withinSeconds: 60 }),
  },
  { route: 'POST /_localplane/clock/unfreeze', call: (client) => client.clock.unfreeze() },
  {
    route: 'POST /_localplane/fault-rules',
    call: (client) => client.faultRules.add({ match: { path: '/v2/deployments' }, action: { status: 503 } }),
  },
  { route: 'GET /_localplane/fault-rules', call: (client) => client.faultRules.list() },
  { route: 'GET /_localplane/fault-rules/near-misses', call: (client) => client.faultRules.nearMisses({ limit: 5 }) },
  { route: 'DELETE /_localplane/fault-rules/:rule_id', call: (client) => client.faultRules.remove('fault-rule-1') },
  { route: 'DELETE /_localplane/fault-rules', call: (client) => client.faultRules.clear() },
  {
    route: 'GET /_localplane/requests',
    call: (client) => client.requests.list({ source: 'api', limit: 5, order: 'desc' }),
  },
  { route: 'POST /_localplane/requests/find', call: (client) => client.requests.find({ method: 'GET' }) },
  {
    route: 'GET /_localplane/requests/count',
    call: (client) => client.requests.count({ header: { name: 'X-API-Key' }, status: 200 }),
  },
  { route: 'GET /_localplane/requests/:request_id', call: (client) => client.requests.get(1) },
  { route: 'GET /_localplane/requests/stats', call: (client) => client.requests.stats({ minutes: 2 }) },
  { route: 'DELETE /_localplane/requests', call: (client) => client.requests.clear() },
];

/**
 * A proxy in front of the instance that notes each request's method and path, to see which route a client call reached.
 */
async function recordingProxy(target: string): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const { port, hostname } = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    seen.push(`${incoming.method} ${new URL(incoming.url!, target).pathname}`);
    const forwarded = httpRequest(
      {
        hostname,
        port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: `${hostname}:${port}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(forwarded);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** An id the route pattern's parameter stands for, so a recorded path can be named by its route. */
function routeOf(path: string, routes: readonly string[]): string | undefined {
  return routes.find((route) => {
    const [method, pattern] = route.split(' ');
    const regex = new RegExp(`^${pattern!.replace(/:\w+/g, '[^/]+')}$`);
    return path.startsWith(`${method} `) && regex.test(path.slice(method!.length + 1));
  });
}

/** Answers with what differs between two instances (times, ports, folders, ids drawn from the clock) made alike. */
function comparable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null)
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)/g, '<time>')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
      .replace(/\/[^"]*localplane-[^"/]+/g, '<dir>')
      .replace(/"(uptime_seconds|bytes|elapsed_ms)":[\d.]+/g, '"$1":0'),
  );
}

async function idsOf(api: AdminMethods, endpoint: string, fixtures: FixturesView): Promise<Ids> {
  const workspace = fixtures.workspaces.find(
    (candidate) => candidate.deployments.length > 0 && candidate.sessions.length > 0,
  )!;
  const state = await api.state({ workspace_id: workspace.id });
  const deployment = state.workspaces[0]!.deployments.find((candidate) => candidate.revisions.length > 0)!;
  const key = 'methods/hello.json';
  const s3 = s3For(
    endpoint,
    fixtures.objstore.keys.find((candidate) => candidate.permissions.includes('create'))!,
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: fixtures.objstore.buckets[0],
      Key: key,
      Body: '{"hello": "methods"}',
      ContentType: 'application/json',
    }),
  );
  s3.destroy();
  return {
    workspace: workspace.id,
    session: workspace.sessions[0]!.id,
    deployment: deployment.id,
    revision: deployment.revisions[0]!.id,
    bucket: fixtures.objstore.buckets[0]!,
    key,
  };
}

/** Runs the steps, each answer made comparable; with `seen` (a proxy's record), also the routes each step reached. */
async function runSteps(
  api: AdminMethods,
  ids: Ids,
  seen?: string[],
  routes: readonly string[] = [],
): Promise<{ answers: unknown[]; reached: (string | undefined)[][] }> {
  const answers: unknown[] = [];
  const reached: (string | undefined)[][] = [];
  for (const step of ADMIN_STEPS) {
    if (seen) seen.length = 0;
    if (step.fails === undefined) answers.push(comparable(await step.call(api, ids)));
    else {
      const error = await step.call(api, ids).then(
        () => new Error(`${step.route} succeeded`),
        (thrown: unknown) => thrown,
      );
      expect(error, step.route).toBeInstanceOf(LocalplaneError);
      expect((error as LocalplaneError).status, step.route).toBe(step.fails);
      answers.push({ status: (error as LocalplaneError).status, detail: (error as LocalplaneError).detail });
    }
    if (seen) reached.push(seen.map((request) => routeOf(request, routes)));
  }
  return { answers, reached };
}

describe('the admin API as methods', () => {
  let inProcess: InProcessLocalplane;
  let served: Localplane;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let adminRoutes: string[];

  beforeAll(async () => {
    [inProcess, served] = await Promise.all([
      createLocalplane({ freezeClock: true }),
      start({ port: 0, objstorePort: 0, freezeClock: true }),
    ]);
    proxy = await recordingProxy(served.apiUrl);
    adminRoutes = inProcess.routes
      .filter(({ path }) => path.startsWith('/_localplane/'))
      .map(({ method, path }) => `${method} ${path}`);
  });
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([inProcess?.stop(), served?.stop()]);
  });

  it('has a method for every admin route but the stream and the older alias', () => {
    const covered = [...ADMIN_STEPS, ...CLIENT_STEPS].map((step) => step.route);
    expect(new Set(covered).size).toBe(covered.length);
    expect([...covered, ...WITHOUT_METHOD].sort()).toEqual([...adminRoutes].sort());
  });

  it('gives the same answers in process and through connect(), each call one request to its route', async () => {
    const client = connect(proxy.url);
    const [localIds, servedIds] = await Promise.all([
      inProcess.fixtures().then(async (fixtures) => idsOf(inProcess, await inProcess.objstoreEndpoint(), fixtures)),
      client.fixtures().then(async (fixtures) => idsOf(client, served.objstoreUrl, fixtures)),
    ]);
    const local = await runSteps(inProcess, localIds);
    const remote = await runSteps(client, servedIds, proxy.seen, adminRoutes);
    expect(remote.reached).toEqual(
      ADMIN_STEPS.map((step) =>
        step.route === 'PUT /_localplane/snapshots/:name'
          ? ['GET /_localplane/snapshots/:name', step.route]
          : [step.route],
      ),
    );
    expect(remote.answers).toEqual(local.answers);
  });

  it(
    'reaches the clock, the journal, the fault rules and reset through connect(), each call one request to its ' +
      'route',
    async () => {
      const client = connect(proxy.url);
      for (const step of CLIENT_STEPS) {
        proxy.seen.length = 0;
        await step.call(client);
        expect(
          proxy.seen.map((request) => routeOf(request, adminRoutes)),
          step.route,
        ).toEqual([step.route]);
      }
    },
  );

  it("answers the journal and the fault rules as the instance's own methods do", async () => {
    const client = connect(served.apiUrl);
    // Frozen again (the instance's start option).
    await client.reset();
    for (const run of ['first', 'second'])
      await fetch(`${served.apiUrl}/v2/deployments`, { headers: { 'X-Test-Run': run } });
    const filter = { header: { name: 'x-test-run', value: 'second' }, status: '4xx' };
    expect(await client.requests.count(filter)).toBe(1);
    expect(await client.requests.count(filter)).toBe(served.requests.count(filter));
    expect(await client.requests.list({ header: 'X-Test-Run:second', status: '4xx' })).toEqual(
      served.requests.list(filter),
    );
    const [first] = served.requests.list();
    expect(await client.requests.get(first!.id)).toEqual(first);
    expect(await client.requests.get(999_999)).toBeUndefined();
    // The stats end at the wall clock's time, which moves between the two.
    const { now: _now, ...stats } = served.requests.stats({ minutes: 3, errors: 1 });
    expect(await client.requests.stats({ minutes: 3, errors: 1 })).toMatchObject(stats);

    const rule = await client.faultRules.add({
      match: { path: '/v2/deployments', method: 'POST' },
      action: { status: 429, headers: { 'Retry-After': '7' } },
    });
    expect(await client.faultRules.list()).toEqual(served.faultRules.list());
    expect(await client.faultRules.nearMisses()).toEqual(served.faultRules.nearMisses());
    expect((await client.faultRules.nearMisses()).near_misses.map((miss) => miss.rule_id)).toEqual([rule.id, rule.id]);
    expect(await client.faultRules.remove(rule.id)).toBe(true);
    expect(await client.faultRules.remove(rule.id)).toBe(false);
  });

  it('throws a LocalplaneError with the status and the detail the route answers', async () => {
    const client = connect(served.apiUrl);
    const unknownWorkspace = await client.workspaces
      .setTier('00000000-0000-4000-8000-000000000000', { tier: 'plus' })
      .catch((error: unknown) => error);
    expect(unknownWorkspace).toBeInstanceOf(LocalplaneError);
    expect(unknownWorkspace).toMatchObject({
      status: 404,
      detail: 'Workspace 00000000-0000-4000-8000-000000000000 not found',
    });
    const badPatch = await inProcess.config.patch({ export_run_max_retries: -1 }).catch((error: unknown) => error);
    expect(badPatch).toMatchObject({
      status: 422,
      detail: [expect.objectContaining({ loc: ['body', 'export_run_max_retries'], type: 'greater_than_equal' })],
    });
    expect((badPatch as Error).message).toMatch(
      /^PATCH \/_localplane\/config answered 422: body\.export_run_max_retries: /,
    );
    await expect(
      client.faultRules.add({ match: { path: '/_localplane/**' }, action: { status: 500 } }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('sends the admin token it is given', async () => {
    const guarded = await start({ port: 0, objstorePort: 0, adminToken: 'methods-token-0001' });
    try {
      await expect(connect(guarded.apiUrl).health()).rejects.toMatchObject({ status: 401 });
      expect((await connect(guarded.apiUrl, { adminToken: 'methods-token-0001' }).health()).status).toBe('ok');
      // In process, no token is asked for.
      expect((await guarded.health()).status).toBe('ok');
    } finally {
      await guarded.stop();
    }
  });
});
