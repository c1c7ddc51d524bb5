import { z } from 'zod';
import { limitsPatch, type InstanceLimits } from '../config.ts';
import { exportRunFaultRequest, validationFaultRequest, type BulkExportFaults } from '../bulk-exports/faults.ts';
import { revisionFaultRequest, type RevisionFaults } from '../deployments/faults.ts';
import type { RevisionLifecycle } from '../deployments/lifecycle.ts';
import type { DeploymentStore } from '../deployments/store.ts';
import type { Fixtures } from '../fixtures/files.ts';
import type { ObjstoreKeyStore } from '../objstore/key-store.ts';
import { OBJSTORE_PERMISSIONS, type EmbeddedObjstore, type ObjstoreKey } from '../objstore/types.ts';
import {
  clockStateSchema,
  faultsStateSchema,
  fixturesViewSchema,
  healthSchema,
  limitsSchema,
  objstoreKeySchema,
  resetSchema,
  tasksSchema,
  tierChangeSchema,
} from './schemas.ts';
import type { ClockControl } from '../shared/clock-control.ts';
import { badRequest, conflict, notFound } from '../shared/errors.ts';
import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { deploymentKnobRoutes } from './deployment-knobs.ts';
import { workspaceView } from './state.ts';
import { tracingKnobRoutes } from './tracing-knobs.ts';
import { formatTimestamp, MICROS_PER_SECOND } from '../shared/time.ts';
import { requestTimestamp } from '../shared/validation.ts';
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
  limits: InstanceLimits;
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
const resetRequest = z.strictObject({ workspace_id: z.guid().optional() });
const keyCreate = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
  /** The workspace whose account the key acts for (buckets it creates are that workspace's); none for the shared account. */
  workspace_id: z.guid().optional(),
});

const WORKSPACE_ID_EXAMPLE = '00000000-0000-4000-8000-000000000001';
const CLOCK_LIMIT = `The clock cannot go past ${formatTimestamp(LATEST_TIME)}`;

/** The harness knobs under /_localplane/: no auth, as in other local emulators. */
export function adminRoutes(deps: AdminDeps) {
  const app = new OpenApiHono('admin');
  const clockState = () => ({ now: formatTimestamp(deps.clock.now()), frozen: deps.clock.frozen });
  const clockResponse = { status: 200, description: "The emulator clock's time and whether it is frozen", schema: clockStateSchema };
  const faultsResponse = { status: 200, description: 'Every armed knob, with the uses it has left', schema: faultsStateSchema };

  app.openapi(
    { method: 'get', path: '/health', summary: 'Health, the objstore URL and the uptime', response: { status: 200, description: 'Up', schema: healthSchema } },
    (c) => c.json({ status: 'ok', objstore_url: deps.objstore.url, uptime_seconds: (Date.now() - deps.startedAt) / 1000 }),
  );

  app.openapi(
    {
      method: 'get',
      path: '/fixtures',
      summary: 'The fixture workspaces, their API keys, projects, integrations and deployments, and the objstore with its keys',
      response: { status: 200, description: 'The fixtures', schema: fixturesViewSchema },
    },
    async (c) =>
      c.json({
        workspaces: deps.workspaces.list().map((workspace) => ({
          ...workspaceView(deps, workspace),
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

  app.openapi(
    {
      method: 'post',
      path: '/reset',
      summary: 'Back to the fixtures: everything (state, objstore, knobs, limits, ids and clock), or one workspace\'s resources',
      body: resetRequest,
      bodyOptional: true,
      response: { status: 200, description: 'Reset', schema: resetSchema },
      errors: [notFoundError('Workspace', `Workspace ${WORKSPACE_ID_EXAMPLE} not found`)],
    },
    async (c, { body }) => {
      const workspaceId = body?.workspace_id;
      await deps.reset({ workspaceId });
      return c.json(workspaceId === undefined ? { status: 'reset' } : { status: 'reset', workspace_id: workspaceId });
    },
  );

  app.openapi({ method: 'get', path: '/clock', summary: 'The emulator clock', response: clockResponse }, (c) => c.json(clockState()));
  app.openapi({ method: 'post', path: '/clock/freeze', summary: 'Freeze the emulator clock', response: clockResponse }, (c) => {
    deps.clock.freeze();
    return c.json(clockState());
  });
  app.openapi({ method: 'post', path: '/clock/unfreeze', summary: 'Let the emulator clock run again', response: clockResponse }, (c) => {
    deps.clock.unfreeze();
    return c.json(clockState());
  });
  app.openapi(
    { method: 'post', path: '/clock/set', summary: 'Set the emulator clock (what falls due runs)', body: clockSet, response: clockResponse },
    async (c, { body }) => {
      await deps.clock.set(body.time);
      return c.json(clockState());
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/clock/advance',
      summary: 'Advance the emulator clock by some seconds (what falls due runs)',
      body: clockAdvance,
      response: clockResponse,
      errors: [httpError(400, 'The clock would go past what its microseconds hold exactly', { too_late: CLOCK_LIMIT })],
    },
    async (c, { body: { seconds } }) => {
      if (deps.clock.now() + seconds * MICROS_PER_SECOND > LATEST_TIME) throw badRequest(CLOCK_LIMIT);
      await deps.clock.advance(seconds);
      return c.json(clockState());
    },
  );

  app.openapi(
    { method: 'get', path: '/tasks', summary: 'The scheduled tasks, soonest first', response: { status: 200, description: 'The tasks', schema: tasksSchema } },
    (c) => c.json(deps.pendingTasks()),
  );

  const limitsResponse = { status: 200, description: 'The limits in force', schema: limitsSchema };
  app.openapi({ method: 'get', path: '/config', summary: 'The limits in force', response: limitsResponse }, (c) => c.json(deps.limits.get()));
  app.openapi({ method: 'patch', path: '/config', summary: 'Change some limits (until reset)', body: limitsPatch, response: limitsResponse }, (c, { body }) => {
    deps.limits.patch(body);
    return c.json(deps.limits.get());
  });

  const faultsState = () => ({ ...deps.faults.describe(), revisions: deps.revisionFaults.describe() });
  app.openapi({ method: 'get', path: '/faults', summary: 'The armed knobs', response: faultsResponse }, (c) => c.json(faultsState()));
  app.openapi({ method: 'delete', path: '/faults', summary: 'Disarm every knob', response: faultsResponse }, (c) => {
    deps.faults.clear();
    deps.revisionFaults.clear();
    return c.json(faultsState());
  });
  app.openapi(
    { method: 'post', path: '/faults/destination-validations', summary: 'Make the next destination validations fail, by name', body: validationFaultRequest, response: faultsResponse },
    (c, { body }) => {
      deps.faults.armValidation(body);
      return c.json(faultsState());
    },
  );
  app.openapi(
    { method: 'post', path: '/faults/export-runs', summary: 'Make the next export runs fail or slow', body: exportRunFaultRequest, response: faultsResponse },
    (c, { body }) => {
      deps.faults.armExportRuns(body);
      return c.json(faultsState());
    },
  );
  app.openapi(
    { method: 'post', path: '/faults/revisions', summary: 'Make the next revisions fail at a stage', body: revisionFaultRequest, response: faultsResponse },
    (c, { body }) => {
      deps.revisionFaults.arm(body);
      return c.json(faultsState());
    },
  );

  app.route('/sessions', tracingKnobRoutes({ tracing: deps.tracing, clock: deps.clock, seed: deps.seed }));
  app.route('/deployments', deploymentKnobRoutes({ deployments: deps.deployments, lifecycle: deps.lifecycle, clock: deps.clock }));

  app.openapi(
    {
      method: 'put',
      path: '/workspaces/:workspace_id/tier',
      summary: "Change a workspace's plan",
      params: workspaceParams,
      body: tierChange,
      response: { status: 200, description: 'The workspace and its plan', schema: tierChangeSchema },
      errors: [notFoundError('Workspace', `Workspace ${WORKSPACE_ID_EXAMPLE} not found`)],
    },
    (c, { params: { workspace_id }, body: { tier } }) => {
      if (!deps.workspaces.setTier(workspace_id, tier)) throw notFound(`Workspace ${workspace_id} not found`);
      return c.json({ id: workspace_id, tier });
    },
  );

  // Key pairs without their secrets: the caller chose the secret and keeps it.
  const keyView = (key: ObjstoreKey) => ({ access_key_id: key.accessKeyId, permissions: key.permissions, workspace_id: key.workspaceId ?? null });
  app.openapi(
    { method: 'get', path: '/objstore/keys', summary: "The objstore's key pairs, without their secrets", response: { status: 200, description: 'The keys', schema: z.array(objstoreKeySchema) } },
    (c) => c.json(deps.objstoreKeys.list().map(keyView)),
  );
  app.openapi(
    {
      method: 'post',
      path: '/objstore/keys',
      summary: 'Add an objstore key pair',
      body: keyCreate,
      response: { status: 201, description: 'The key, without its secret', schema: objstoreKeySchema },
      errors: [
        notFoundError('Workspace', `Workspace ${WORKSPACE_ID_EXAMPLE} not found`),
        httpError(409, 'A key of that id exists', { exists: 'Objstore key AKIAEXAMPLE already exists' }),
      ],
    },
    (c, { body }) => {
      const workspaceId = body.workspace_id ?? null;
      if (workspaceId !== null && !deps.workspaces.find(workspaceId)) throw notFound(`Workspace ${workspaceId} not found`);
      const key = { accessKeyId: body.access_key_id, secretAccessKey: body.secret_access_key, permissions: body.permissions, workspaceId };
      if (!deps.objstoreKeys.add(key)) throw conflict(`Objstore key ${body.access_key_id} already exists`);
      return c.json(keyView(key), 201);
    },
  );
  app.openapi(
    {
      method: 'delete',
      path: '/objstore/keys/:access_key_id',
      summary: 'Revoke an objstore key pair',
      response: { status: 204, description: 'Revoked' },
      errors: [notFoundError('Objstore key', 'Objstore key AKIAEXAMPLE not found')],
    },
    (c) => {
      const accessKeyId = c.req.param('access_key_id')!;
      if (!deps.objstoreKeys.revoke(accessKeyId)) throw notFound(`Objstore key ${accessKeyId} not found`);
      return c.body(null, 204);
    },
  );

  return app;
}
