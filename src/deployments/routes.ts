import { Hono } from 'hono';
import { requireWorkspace, type AuthVariables } from '../shared/auth.ts';
import type { Clock } from '../shared/clock.ts';
import type { ResponseCache } from '../shared/response-cache.ts';
import { conflict, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import { jsonBody, pathParams, queryParams } from '../shared/validation.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import {
  codehostIntegrationResponse,
  codehostRepositoryResponse,
  deploymentResponse,
  oauthProviderResponse,
  revisionResponse,
} from './responses.ts';
import { newDeployment, redeployedRevision } from './creation.ts';
import type { RevisionLifecycle } from './lifecycle.ts';
import { applyPatch } from './patching.ts';
import {
  deleteDeploymentQuery,
  deleteDeploymentsQuery,
  DELETE_DEPLOYMENTS_QUERY_LISTS,
  deploymentCreate,
  deploymentPatch,
  deploymentIdParams,
  deploymentsQuery,
  integrationIdParams,
  DEPLOYMENTS_QUERY_LISTS,
  revisionIdParams,
  revisionsQuery,
  REVISIONS_QUERY_LISTS,
  type DeletionResult,
  type DeploymentsList,
  type RevisionsList,
} from './schemas.ts';
import { checkCreateSource } from './source-rules.ts';
import type { DeploymentStore } from './store.ts';

export interface DeploymentRouteDeps {
  store: DeploymentStore;
  workspaces: WorkspaceStore;
}

export interface DeploymentWriteDeps extends DeploymentRouteDeps {
  tracing: TracingStore;
  clock: Clock;
  ids: IdGenerator;
  lifecycle: RevisionLifecycle;
  responseCache: ResponseCache;
}

function workspaceApp(deps: DeploymentRouteDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use('*', requireWorkspace(deps.workspaces));
  return app;
}

/** /v2/deployments: deployments and their revisions. */
export function deploymentRoutes(deps: DeploymentWriteDeps) {
  const { store, lifecycle } = deps;
  const app = workspaceApp(deps);

  const findDeployment = (tenantId: string, id: string) => {
    const deployment = store.deployment(tenantId, id);
    if (!deployment) throw notFound(`Deployment ID ${id} not found.`);
    return deployment;
  };

  const findRevision = (deploymentId: string, id: string) => {
    const revision = store.revision(deploymentId, id);
    if (!revision) throw notFound(`Revision ID ${id} not found.`);
    return revision;
  };

  // The hottest read of the API (clients poll it): answered from the cache until the next write.
  app.get('/', (c) => {
    const queryStart = c.req.url.indexOf('?');
    const cacheKey = c.get('workspace').id + (queryStart === -1 ? '' : c.req.url.slice(queryStart));
    let body = deps.responseCache.get(cacheKey);
    if (body === undefined) {
      const query = queryParams(c, deploymentsQuery, DEPLOYMENTS_QUERY_LISTS);
      const resources = store.deployments(c.get('workspace').id, query).map(deploymentResponse);
      body = JSON.stringify({ resources, offset: query.offset + resources.length } satisfies DeploymentsList);
      deps.responseCache.set(cacheKey, body);
    }
    return c.body(body, 200, { 'content-type': 'application/json' });
  });

  app.post('/', async (c) => {
    const body = await jsonBody(c, deploymentCreate);
    const tenantId = c.get('workspace').id;
    checkCreateSource(store, tenantId, body);
    if (deps.tracing.sessionsOf(tenantId).some((project) => project.name === body.name)) {
      throw conflict(`A tracing project named ${body.name} already exists in this workspace.`);
    }
    const { deployment, revision, project } = newDeployment(body, { tenantId, now: deps.clock.now(), ids: deps.ids });
    store.create(deployment, revision, project);
    lifecycle.started(revision);
    return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)), 201);
  });

  app.delete('/', (c) => {
    const { deployment_ids } = queryParams(c, deleteDeploymentsQuery, DELETE_DEPLOYMENTS_QUERY_LISTS);
    const tenantId = c.get('workspace').id;
    const results = deployment_ids.map((id): DeletionResult => {
      const deployment = store.deployment(tenantId, id);
      if (!deployment) return { deployment_id: id, deleted: false, detail: `Deployment ID ${id} not found.` };
      store.delete(deployment, { deleteTracingProject: false });
      lifecycle.stop(deployment.id);
      return { deployment_id: id, deleted: true };
    });
    return c.json({ results }, results.every((result) => result.deleted) ? 200 : 207);
  });

  app.delete('/:deployment_id', (c) => {
    const { deployment_id } = pathParams(c, deploymentIdParams);
    const { delete_tracing_project } = queryParams(c, deleteDeploymentQuery);
    store.delete(findDeployment(c.get('workspace').id, deployment_id), { deleteTracingProject: delete_tracing_project });
    lifecycle.stop(deployment_id);
    return c.body(null, 204);
  });

  app.get('/:deployment_id', (c) => {
    const { deployment_id } = pathParams(c, deploymentIdParams);
    return c.json(deploymentResponse(findDeployment(c.get('workspace').id, deployment_id)));
  });

  app.patch('/:deployment_id', async (c) => {
    const { deployment_id } = pathParams(c, deploymentIdParams);
    const body = await jsonBody(c, deploymentPatch);
    const tenantId = c.get('workspace').id;
    const { deployment, revision } = applyPatch(findDeployment(tenantId, deployment_id), body, { ids: deps.ids, now: deps.clock.now() });
    store.update(deployment, revision);
    if (revision) lifecycle.started(revision);
    return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)));
  });

  app.post('/:deployment_id/revisions/:revision_id/redeploy', (c) => {
    const { deployment_id, revision_id } = pathParams(c, revisionIdParams);
    const tenantId = c.get('workspace').id;
    const deployment = findDeployment(tenantId, deployment_id);
    const revision = findRevision(deployment.id, revision_id);
    const now = deps.clock.now();
    const copy = redeployedRevision(deps.ids, revision, now);
    store.update({ ...deployment, latest_revision_id: copy.id, updated_at: now }, copy);
    lifecycle.started(copy);
    return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)));
  });

  app.get('/:deployment_id/revisions', (c) => {
    const { deployment_id } = pathParams(c, deploymentIdParams);
    const query = queryParams(c, revisionsQuery, REVISIONS_QUERY_LISTS);
    const deployment = findDeployment(c.get('workspace').id, deployment_id);
    const resources = store.revisions(deployment.id, query).map(revisionResponse);
    return c.json({ resources, offset: query.offset + resources.length } satisfies RevisionsList);
  });

  app.get('/:deployment_id/revisions/:revision_id', (c) => {
    const { deployment_id, revision_id } = pathParams(c, revisionIdParams);
    const deployment = findDeployment(c.get('workspace').id, deployment_id);
    return c.json(revisionResponse(findRevision(deployment.id, revision_id)));
  });

  return app;
}

/** /v2/auth/providers: the workspace's OAuth providers (E5). */
export function oauthProviderRoutes(deps: DeploymentRouteDeps) {
  const app = workspaceApp(deps);

  app.get('/', (c) => c.json(deps.store.providers(c.get('workspace').id).map(oauthProviderResponse)));

  app.get('/:provider_id', (c) => {
    const providerId = c.req.param('provider_id');
    const provider = deps.store.provider(c.get('workspace').id, providerId);
    if (!provider) throw notFound(`OAuth provider ${providerId} not found.`);
    return c.json(oauthProviderResponse(provider));
  });

  return app;
}

/** /v1/integrations/forge/codehost: the workspace's codehost integrations and their repositories (E6). */
export function codehostRoutes(deps: DeploymentRouteDeps) {
  const app = workspaceApp(deps);

  app.get('/install', (c) => c.json(deps.store.integrations(c.get('workspace').id).map(codehostIntegrationResponse)));

  app.get('/:integration_id/repos', (c) => {
    const { integration_id } = pathParams(c, integrationIdParams);
    const integration = deps.store.integration(c.get('workspace').id, integration_id);
    if (!integration) throw notFound(`Codehost integration ID ${integration_id} not found.`);
    return c.json(deps.store.repos(integration.id).map(codehostRepositoryResponse));
  });

  return app;
}
