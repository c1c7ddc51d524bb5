import { z } from 'zod';
import { objstoreKeyView } from '../objstore/key-routes.ts';
import type { InstanceLimits } from '../config.ts';
import type { BulkExportFaults } from '../bulk-exports/faults.ts';
import { destinationResponse, exportResponse, runResponse } from '../bulk-exports/responses.ts';
import type { BulkExportStore } from '../bulk-exports/store.ts';
import type { RevisionFaults } from '../deployments/faults.ts';
import {
  codehostIntegrationResponse,
  codehostRepositoryResponse,
  deploymentResponse,
  oauthProviderResponse,
  revisionResponse,
} from '../deployments/responses.ts';
import { listenerResponse } from '../deployments/listeners.ts';
import type { DeploymentStore } from '../deployments/store.ts';
import type { ObjstoreKeyStore } from '../objstore/key-store.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import type { ClockControl } from '../shared/clock-control.ts';
import { MASKED_SECRET_VALUE, notFound, SECRET_FIELDS } from '../shared/errors.ts';
import { formatTimestamp } from '../shared/time.ts';
import { notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { stateSchema, type Task } from './schemas.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { Workspace, WorkspaceStore } from '../workspaces/store.ts';
import { sessionView } from '../tracing/knob-routes.ts';

export interface StateDeps {
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  bulkExports: BulkExportStore;
  deployments: DeploymentStore;
  objstore: EmbeddedObjstore;
  objstoreKeys: ObjstoreKeyStore;
  clock: ClockControl;
  limits: InstanceLimits;
  faults: BulkExportFaults;
  revisionFaults: RevisionFaults;
  pendingTasks: () => Task[];
}

const stateQuery = z.object({ workspace_id: z.guid().optional() });
export type StateQuery = z.input<typeof stateQuery>;

/**
 * A safety net under the API's own shapes (which already mask): a text under a field with a
 * secret's name shows masked, at any depth; lists and objects under one keep their shape (a
 * deployment's `secrets` keep their names).
 */
function maskSecretTexts(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return SECRET_FIELDS.has(key) ? MASKED_SECRET_VALUE : value;
  if (Array.isArray(value)) return value.map((item) => maskSecretTexts(item, key));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, maskSecretTexts(field, name)]));
}

/** A workspace as the fixtures view and the state dump begin it. */
export function workspaceView(stores: { tracing: TracingStore; deployments: DeploymentStore }, workspace: Workspace) {
  return {
    id: workspace.id,
    name: workspace.name,
    tier: workspace.tier,
    api_key: workspace.api_key,
    self_hosted: stores.deployments.isSelfHosted(workspace.id),
    sessions: stores.tracing.sessionsOf(workspace.id).map((session) => sessionView(stores.tracing, session)),
  };
}

/** Every resource of one workspace, in the API's own shapes where it has one. */
function workspaceState(deps: StateDeps, workspace: Workspace) {
  const { bulkExports, deployments } = deps;
  const destinations = bulkExports.destinations(workspace.id);
  return {
    ...workspaceView(deps, workspace),
    api_key: MASKED_SECRET_VALUE,
    destinations: destinations.map(destinationResponse),
    bulk_exports: bulkExports.exports(workspace.id, -1, 0).map((exportRow) => {
      const destination = destinations.find((candidate) => candidate.id === exportRow.bulk_export_destination_id);
      return {
        ...exportResponse(exportRow),
        runs: bulkExports.runsOf(exportRow.id).map((run) => runResponse(run, exportRow, destination)),
      };
    }),
    deployments: deployments.deploymentsOf(workspace.id).map((row) => ({
      ...deploymentResponse(deployments.deploymentById(row.id)!),
      revisions: deployments.revisionsOf(row.id).map(revisionResponse),
    })),
    listeners: deployments.listeners(workspace.id).map(listenerResponse),
    oauth_providers: deployments.providers(workspace.id).map(oauthProviderResponse),
    codehost_integrations: deployments.integrations(workspace.id).map((integration) => ({
      ...codehostIntegrationResponse(integration),
      repos: deployments.repos(integration.id).map(codehostRepositoryResponse),
    })),
  };
}

/** GET /_localplane/state: a dump of every resource, for reading after a failed test. Secrets are masked. */
export function stateRoutes(deps: StateDeps) {
  const app = new OpenApiHono('admin');
  app.openapi(
    {
      method: 'get',
      path: '/state',
      summary: 'Every resource, of every workspace or one, secrets masked: for reading after a failed test',
      query: stateQuery,
      response: { status: 200, description: 'The state', schema: stateSchema },
      errors: [notFoundError('Workspace', 'Workspace 00000000-0000-4000-8000-000000000001 not found')],
    },
    (c, { query }) => {
      const workspaceId = query.workspace_id;
      let workspaces: Workspace[];
      if (workspaceId === undefined) workspaces = deps.workspaces.list();
      else {
        const workspace = deps.workspaces.find(workspaceId);
        if (!workspace) throw notFound(`Workspace ${workspaceId} not found`);
        workspaces = [workspace];
      }
      const state = {
        clock: { now: formatTimestamp(deps.clock.now()), frozen: deps.clock.frozen },
        limits: deps.limits.get(),
        workspaces: workspaces.map((workspace) => workspaceState(deps, workspace)),
        objstore: {
          url: deps.objstore.url,
          files_dir: deps.objstore.filesDir,
          buckets: deps.objstore.buckets(),
          keys: deps.objstoreKeys.list().map(objstoreKeyView),
        },
        faults: { ...deps.faults.describe(), revisions: deps.revisionFaults.describe() },
        pending_tasks: deps.pendingTasks(),
      };
      return c.json(maskSecretTexts(state) as typeof state);
    },
  );
  return app;
}
