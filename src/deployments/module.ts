import type { InstanceCore } from '../core.ts';
import type { Destinations } from '../destinations/module.ts';
import type { InstanceBucket } from '../objstore/module.ts';
import { nameComponents } from '../openapi/components.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { writeCounter } from '../shared/db.ts';
import type { UnchangingBody } from '../shared/response-capture.ts';
import { WriteScopedCache } from '../shared/write-scoped-cache.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import { DeploymentDeletions } from './deletions.ts';
import { RevisionFaults } from './faults.ts';
import { RevisionLifecycle } from './lifecycle.ts';
import { deploymentKnobRoutes } from './knob-routes.ts';
import { listenerResponseSchema, listenersListSchema } from './listener-schemas.ts';
import { listenerRoutes } from './listener-routes.ts';
import { oauthProviderRoutes } from './oauth-provider-routes.ts';
import { codehostRoutes, deploymentRoutes, projectLogRoutes } from './routes.ts';
import {
  codehostIntegrationSchema,
  codehostRepositorySchema,
  deploymentResponseSchema,
  deploymentsListSchema,
  oauthProviderResponseSchema,
  revisionResponseSchema,
  revisionsListSchema,
} from './schemas.ts';
import { SOURCE_TARBALL_BUCKET, SourceUploads, sourceUploadKey } from './source-uploads.ts';
import { DeploymentStore } from './store.ts';

// On load, not per instance: the document without routes (what responses are checked against) lists them too.
nameComponents({
  Deployment: deploymentResponseSchema,
  DeploymentsList: deploymentsListSchema,
  Revision: revisionResponseSchema,
  RevisionsList: revisionsListSchema,
  OAuthProviderResponse: oauthProviderResponseSchema,
  Listener: listenerResponseSchema,
  ListenersList: listenersListSchema,
  CodehostIntegration: codehostIntegrationSchema,
  CodehostRepository: codehostRepositorySchema,
});

/** The objstore bucket where remote builds' source tarballs go, with the instance's own key to it. */
export function sourceTarballBucket(): InstanceBucket {
  return { bucket: SOURCE_TARBALL_BUCKET, keeper: sourceUploadKey() };
}

export interface DeploymentModuleDeps {
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  destinations: Destinations;
  sourceTarballs: InstanceBucket;
  /** Binds the embedded objstore if need be, and gives its URL. */
  objstoreEndpoint: () => Promise<string>;
}

/**
 * Deployments, listeners and OAuth providers: their store, the revision lifecycle and deletions, their faults, routes,
 * knobs and state parts.
 */
export function deploymentsModule(core: InstanceCore, deps: DeploymentModuleDeps) {
  const { db, scheduler, clock, ids, limits } = core;
  const store = new DeploymentStore(db);
  const faults = new RevisionFaults();
  const lifecycle = new RevisionLifecycle({ store, scheduler, clock, limits, faults });
  const deletions = new DeploymentDeletions({ store, scheduler, clock, limits, lifecycle });
  const sourceUploads = new SourceUploads({
    key: deps.sourceTarballs.keeper,
    ids,
    objstoreClients: deps.destinations.clients,
    objstoreEndpoint: deps.objstoreEndpoint,
  });
  core.parts.register('revision lifecycle', {
    resume: () => lifecycle.resume(),
    stopWorkspace: (workspaceId) => lifecycle.stopWorkspace(workspaceId),
    resumeWorkspace: (workspaceId) => lifecycle.resumeWorkspace(workspaceId),
  });
  core.parts.register('deployment deletions', {
    resume: () => deletions.resume(),
    stopWorkspace: (workspaceId) => deletions.stopWorkspace(workspaceId),
    resumeWorkspace: (workspaceId) => deletions.resumeWorkspace(workspaceId),
  });
  core.parts.register('revision faults', {
    reset: () => faults.clear(),
    stopWorkspace: (workspaceId) =>
      faults.clearDeployments(new Set(store.deploymentsOf(workspaceId).map((deployment) => deployment.id))),
  });
  const routeDeps = {
    store,
    workspaces: deps.workspaces,
    tracing: deps.tracing,
    clock,
    ids,
    lifecycle,
    deletions,
    sourceUploads,
    responseCache: new WriteScopedCache<UnchangingBody>(writeCounter(db)),
  };
  const routes = new OpenApiHono()
    .route('/v2/deployments', deploymentRoutes(routeDeps))
    .route('/v2/listeners', listenerRoutes(routeDeps))
    .route('/v2/auth/providers', oauthProviderRoutes(routeDeps))
    .route('/v1/projects', projectLogRoutes(routeDeps))
    .route('/v1/integrations/forge/codehost', codehostRoutes(routeDeps));
  const adminRoutes = new OpenApiHono('admin').route(
    '/deployments',
    deploymentKnobRoutes({ deployments: store, lifecycle, clock }),
  );
  return { store, faults, routes, adminRoutes };
}

export type DeploymentModule = ReturnType<typeof deploymentsModule>;
