import { Hono } from 'hono';
import { z } from 'zod';
import { limitsPatch, type Limits, type LimitsPatch } from '../config.ts';
import { exportRunFaultRequest, validationFaultRequest, type BulkExportFaults } from '../bulk-exports/faults.ts';
import { revisionFaultRequest, type RevisionFaults } from '../deployments/faults.ts';
import type { RevisionLifecycle } from '../deployments/lifecycle.ts';
import type { DeploymentStore } from '../deployments/store.ts';
import type { Fixtures } from '../fixtures/files.ts';
import type { ObjstoreKeyStore } from '../objstore/key-store.ts';
import { OBJSTORE_PERMISSIONS, type EmbeddedObjstore } from '../objstore/types.ts';
import type { ClockControl } from '../shared/clock-control.ts';
import { badRequest, conflict, notFound } from '../shared/errors.ts';
import { deploymentKnobRoutes } from './deployment-knobs.ts';
import { sessionView, tracingKnobRoutes } from './tracing-knobs.ts';
import { formatTimestamp, MICROS_PER_SECOND } from '../shared/time.ts';
import { jsonBody, optionalJsonBody, pathParams } from '../shared/validation.ts';
import { requestTimestamp } from '../bulk-exports/schemas.ts';
import type { TracingStore } from '../tracing/store.ts';
import { TIERS, type WorkspaceStore } from '../workspaces/store.ts';

export interface AdminDeps {
  fixtures: Fixtures;
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  deployments: DeploymentStore;
  objstore: EmbeddedObjstore;
  /** Binds the objstore if it is not yet listening, and gives its URL. */
  objstoreEndpoint: () => Promise<string>;
  objstoreKeys: ObjstoreKeyStore;
  endpointAliases: readonly string[];
  clock: ClockControl;
  faults: BulkExportFaults;
  revisionFaults: RevisionFaults;
  lifecycle: RevisionLifecycle;
  limits: { get(): Limits; patch(changes: LimitsPatch): void };
  pendingTasks: () => { due_at: string; label: string }[];
  reset: (scope?: { workspaceId?: string }) => Promise<void>;
  startedAt: number;
  seed: number;
}

/** The clock goes no further than its microseconds stay exact (2255-06-05). */
const LATEST_TIME = Number.MAX_SAFE_INTEGER;
const clockSet = z.object({ time: requestTimestamp });
const clockAdvance = z.object({ seconds: z.number().min(0) });
const tierChange = z.object({ tier: z.enum(TIERS) });
const workspaceParams = z.object({ workspace_id: z.guid() });
/** An empty body (or none) resets everything; a workspace id, that workspace's resources alone. */
export const resetRequest = z.strictObject({ workspace_id: z.guid().optional() });
const keyCreate = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
});

/** The harness knobs under /_localplane/: no auth, as in other local emulators. */
export function adminRoutes(deps: AdminDeps) {
  const app = new Hono();
  const clockState = () => ({ now: formatTimestamp(deps.clock.now()), frozen: deps.clock.frozen });

  app.get('/health', (c) =>
    c.json({ status: 'ok', objstore_url: deps.objstore.url, uptime_seconds: (Date.now() - deps.startedAt) / 1000 }),
  );

  app.get('/fixtures', async (c) =>
    c.json({
      workspaces: deps.workspaces.list().map((workspace) => ({
        id: workspace.id,
        name: workspace.name,
        tier: workspace.tier,
        api_key: workspace.api_key,
        sessions: deps.tracing.sessionsOf(workspace.id).map((session) => sessionView(deps.tracing, session)),
        self_hosted: deps.deployments.isSelfHosted(workspace.id),
        integrations: deps.deployments.integrations(workspace.id).map((integration) => ({
          id: integration.id,
          repos: deps.deployments.repos(integration.id).map(({ id, url, default_branch }) => ({ id, url, default_branch })),
        })),
        listeners: deps.deployments.listeners(workspace.id).map((listener) => listener.id),
        deployments: deps.deployments.deploymentsOf(workspace.id).map(({ id, name, source }) => ({ id, name, source })),
      })),
      unknown_api_key: deps.fixtures.workspaces.unknown_api_key,
      objstore: {
        // Handing out the endpoint is what binds an in-process instance's objstore.
        endpoint_url: await deps.objstoreEndpoint(),
        buckets: deps.fixtures.objstore.buckets,
        public_buckets: deps.fixtures.objstore.public_buckets,
        keys: deps.fixtures.objstore.keys,
        files_dir: deps.objstore.filesDir,
        endpoint_aliases: deps.endpointAliases,
      },
    }),
  );

  app.post('/reset', async (c) => {
    const workspaceId = (await optionalJsonBody(c, resetRequest))?.workspace_id;
    await deps.reset({ workspaceId });
    return c.json(workspaceId === undefined ? { status: 'reset' } : { status: 'reset', workspace_id: workspaceId });
  });

  app.get('/clock', (c) => c.json(clockState()));
  app.post('/clock/freeze', (c) => {
    deps.clock.freeze();
    return c.json(clockState());
  });
  app.post('/clock/unfreeze', (c) => {
    deps.clock.unfreeze();
    return c.json(clockState());
  });
  app.post('/clock/set', async (c) => {
    const { time } = await jsonBody(c, clockSet);
    await deps.clock.set(time);
    return c.json(clockState());
  });
  app.post('/clock/advance', async (c) => {
    const { seconds } = await jsonBody(c, clockAdvance);
    if (deps.clock.now() + seconds * MICROS_PER_SECOND > LATEST_TIME) {
      throw badRequest(`The clock cannot go past ${formatTimestamp(LATEST_TIME)}`);
    }
    await deps.clock.advance(seconds);
    return c.json(clockState());
  });

  app.get('/tasks', (c) => c.json(deps.pendingTasks()));

  app.get('/config', (c) => c.json(deps.limits.get()));
  app.patch('/config', async (c) => {
    deps.limits.patch(await jsonBody(c, limitsPatch));
    return c.json(deps.limits.get());
  });

  const faultsState = () => ({ ...deps.faults.describe(), revisions: deps.revisionFaults.describe() });
  app.get('/faults', (c) => c.json(faultsState()));
  app.delete('/faults', (c) => {
    deps.faults.clear();
    deps.revisionFaults.clear();
    return c.json(faultsState());
  });
  app.post('/faults/destination-validations', async (c) => {
    deps.faults.armValidation(await jsonBody(c, validationFaultRequest));
    return c.json(faultsState());
  });
  app.post('/faults/export-runs', async (c) => {
    deps.faults.armExportRuns(await jsonBody(c, exportRunFaultRequest));
    return c.json(faultsState());
  });
  app.post('/faults/revisions', async (c) => {
    deps.revisionFaults.arm(await jsonBody(c, revisionFaultRequest));
    return c.json(faultsState());
  });

  app.route('/sessions', tracingKnobRoutes({ tracing: deps.tracing, clock: deps.clock, seed: deps.seed }));
  app.route('/deployments', deploymentKnobRoutes({ deployments: deps.deployments, lifecycle: deps.lifecycle, clock: deps.clock }));

  app.put('/workspaces/:workspace_id/tier', async (c) => {
    const { workspace_id } = pathParams(c, workspaceParams);
    const { tier } = await jsonBody(c, tierChange);
    if (!deps.workspaces.setTier(workspace_id, tier)) throw notFound(`Workspace ${workspace_id} not found`);
    return c.json({ id: workspace_id, tier });
  });

  app.get('/objstore/journal', (c) => c.json(deps.objstore.journal()));

  // Key pairs without their secrets: the caller chose the secret and keeps it.
  const keyView = (key: { accessKeyId: string; permissions: readonly string[] }) => ({ access_key_id: key.accessKeyId, permissions: key.permissions });
  app.get('/objstore/keys', (c) => c.json(deps.objstoreKeys.list().map(keyView)));
  app.post('/objstore/keys', async (c) => {
    const body = await jsonBody(c, keyCreate);
    const key = { accessKeyId: body.access_key_id, secretAccessKey: body.secret_access_key, permissions: body.permissions };
    if (!deps.objstoreKeys.add(key)) throw conflict(`Objstore key ${body.access_key_id} already exists`);
    return c.json(keyView(key), 201);
  });
  app.delete('/objstore/keys/:access_key_id', (c) => {
    const accessKeyId = c.req.param('access_key_id');
    if (!deps.objstoreKeys.revoke(accessKeyId)) throw notFound(`Objstore key ${accessKeyId} not found`);
    return c.body(null, 204);
  });

  return app;
}
