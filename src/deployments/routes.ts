import { z } from 'zod';
import { EXAMPLE_ID, httpError, notFoundError, WORKSPACE_AUTH_ERRORS } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { requireWorkspace, type AuthVariables } from '../shared/auth.ts';
import type { Clock } from '../shared/clock.ts';
import type { WriteScopedCache } from '../shared/write-scoped-cache.ts';
import { conflict, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import {
  codehostIntegrationResponse,
  codehostRepositoryResponse,
  deploymentResponse,
  revisionResponse,
} from './responses.ts';
import { newDeployment, redeployedRevision } from './creation.ts';
import type { RevisionLifecycle } from './lifecycle.ts';
import { applyPatch } from './patching.ts';
import {
  deleteDeploymentQuery,
  deleteDeploymentsQuery,
  DELETE_DEPLOYMENTS_QUERY_LISTS,
  deletionResultsSchema,
  deploymentCreate,
  deploymentPatch,
  deploymentIdParams,
  deploymentResponseSchema,
  deploymentsListSchema,
  deploymentsQuery,
  codehostIntegrationSchema,
  codehostRepositorySchema,
  integrationIdParams,
  DEPLOYMENTS_QUERY_LISTS,
  revisionIdParams,
  revisionResponseSchema,
  revisionsListSchema,
  revisionsQuery,
  REVISIONS_QUERY_LISTS,
  type DeletionResult,
  type DeploymentsList,
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
  responseCache: WriteScopedCache<string>;
}

const deploymentNotFound = (id: string) => `Deployment ID ${id} not found.`;
const revisionNotFound = (id: string) => `Revision ID ${id} not found.`;
const DEPLOYMENT_NOT_FOUND = notFoundError('Deployment', deploymentNotFound(EXAMPLE_ID));
const REVISION_NOT_FOUND = httpError(404, 'The deployment or the revision does not exist', {
  deployment_not_found: deploymentNotFound(EXAMPLE_ID),
  revision_not_found: revisionNotFound(EXAMPLE_ID),
});
const SOURCE_CONFIGURATION_ERROR = 'Source configuration error: image_uri is required for source external_container.';

/** An app of the deployment family: every route needs an API key of the workspace named by X-Tenant-Id. */
export function workspaceApp(tag: string, deps: DeploymentRouteDeps) {
  return new OpenApiHono<{ Variables: AuthVariables }>(tag).guard(WORKSPACE_AUTH_ERRORS, requireWorkspace(deps.workspaces));
}

/** /v2/deployments: deployments and their revisions. */
export function deploymentRoutes(deps: DeploymentWriteDeps) {
  const { store, lifecycle } = deps;
  const app = workspaceApp('deployments', deps);

  const findDeployment = (tenantId: string, id: string) => {
    const deployment = store.deployment(tenantId, id);
    if (!deployment) throw notFound(deploymentNotFound(id));
    return deployment;
  };

  const findRevision = (deploymentId: string, id: string) => {
    const revision = store.revision(deploymentId, id);
    if (!revision) throw notFound(revisionNotFound(id));
    return revision;
  };

  // The hottest read of the API (clients poll it): answered from the cache until the next write.
  app.openapi(
    {
      method: 'get',
      path: '/',
      summary: "List the workspace's deployments",
      query: deploymentsQuery,
      queryLists: DEPLOYMENTS_QUERY_LISTS,
      response: { status: 200, description: 'A page of deployments', schema: deploymentsListSchema },
    },
    (c, { query }) => {
      const queryStart = c.req.url.indexOf('?');
      const cacheKey = c.get('workspace').id + (queryStart === -1 ? '' : c.req.url.slice(queryStart));
      let body = deps.responseCache.get(cacheKey);
      if (body === undefined) {
        const resources = store.deployments(c.get('workspace').id, query).map(deploymentResponse);
        body = JSON.stringify({ resources, offset: query.offset + resources.length } satisfies DeploymentsList);
        deps.responseCache.set(cacheKey, body);
      }
      return c.body(body, 200, { 'content-type': 'application/json' });
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/',
      summary: 'Create a deployment, its first revision and its tracing project',
      body: deploymentCreate,
      response: { status: 201, description: 'The deployment', schema: deploymentResponseSchema },
      errors: [
        httpError(400, "The source's rules are broken", { source_configuration: SOURCE_CONFIGURATION_ERROR }),
        httpError(409, 'A tracing project of that name exists', { project_exists: 'A tracing project named my-graph already exists in this workspace.' }),
      ],
    },
    (c, { body }) => {
      const tenantId = c.get('workspace').id;
      checkCreateSource(store, tenantId, body);
      if (deps.tracing.sessionsOf(tenantId).some((project) => project.name === body.name)) {
        throw conflict(`A tracing project named ${body.name} already exists in this workspace.`);
      }
      const { deployment, revision, project } = newDeployment(body, { tenantId, now: deps.clock.now(), ids: deps.ids });
      store.create(deployment, revision, project);
      lifecycle.started(revision);
      return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)), 201);
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/',
      summary: 'Delete deployments by id (their tracing projects stay)',
      query: deleteDeploymentsQuery,
      queryLists: DELETE_DEPLOYMENTS_QUERY_LISTS,
      response: [
        { status: 200, description: 'Every deployment was deleted', schema: deletionResultsSchema },
        { status: 207, description: 'Some ids named no deployment of the workspace', schema: deletionResultsSchema },
      ],
    },
    (c, { query }) => {
      const tenantId = c.get('workspace').id;
      const results = query.deployment_ids.map((id): DeletionResult => {
        const deployment = store.deployment(tenantId, id);
        if (!deployment) return { deployment_id: id, deleted: false, detail: deploymentNotFound(id) };
        store.delete(deployment, { deleteTracingProject: false });
        lifecycle.stop(deployment.id);
        return { deployment_id: id, deleted: true };
      });
      return c.json({ results }, results.every((result) => result.deleted) ? 200 : 207);
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/:deployment_id',
      summary: 'Delete a deployment (and, if asked, its tracing project)',
      params: deploymentIdParams,
      query: deleteDeploymentQuery,
      response: { status: 204, description: 'Deleted' },
      errors: [DEPLOYMENT_NOT_FOUND],
    },
    (c, { params, query }) => {
      store.delete(findDeployment(c.get('workspace').id, params.deployment_id), { deleteTracingProject: query.delete_tracing_project });
      lifecycle.stop(params.deployment_id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:deployment_id',
      summary: 'Get a deployment',
      params: deploymentIdParams,
      response: { status: 200, description: 'The deployment', schema: deploymentResponseSchema },
      errors: [DEPLOYMENT_NOT_FOUND],
    },
    (c, { params }) => c.json(deploymentResponse(findDeployment(c.get('workspace').id, params.deployment_id))),
  );

  app.openapi(
    {
      method: 'patch',
      path: '/:deployment_id',
      summary: 'Change a deployment: in place, or with a new revision',
      params: deploymentIdParams,
      body: deploymentPatch,
      response: { status: 200, description: 'The deployment', schema: deploymentResponseSchema },
      errors: [
        httpError(400, 'A fixed field changes, or a source rule is broken', {
          fixed_field: 'name cannot be changed once the deployment is created.',
          source_configuration: 'Source configuration error: secret_references are only applicable to source external_container.',
        }),
        DEPLOYMENT_NOT_FOUND,
      ],
    },
    (c, { params, body }) => {
      const tenantId = c.get('workspace').id;
      const { deployment, revision } = applyPatch(findDeployment(tenantId, params.deployment_id), body, { ids: deps.ids, now: deps.clock.now() });
      store.update(deployment, revision);
      if (revision) lifecycle.started(revision);
      return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)));
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/:deployment_id/revisions/:revision_id/redeploy',
      summary: 'Deploy an earlier revision again, as a new revision',
      params: revisionIdParams,
      response: { status: 200, description: 'The deployment', schema: deploymentResponseSchema },
      errors: [REVISION_NOT_FOUND],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      const deployment = findDeployment(tenantId, params.deployment_id);
      const revision = findRevision(deployment.id, params.revision_id);
      const now = deps.clock.now();
      const copy = redeployedRevision(deps.ids, revision, now);
      store.update({ ...deployment, latest_revision_id: copy.id, updated_at: now }, copy);
      lifecycle.started(copy);
      return c.json(deploymentResponse(findDeployment(tenantId, deployment.id)));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:deployment_id/revisions',
      summary: "List a deployment's revisions",
      params: deploymentIdParams,
      query: revisionsQuery,
      queryLists: REVISIONS_QUERY_LISTS,
      response: { status: 200, description: 'A page of revisions', schema: revisionsListSchema },
      errors: [DEPLOYMENT_NOT_FOUND],
    },
    (c, { params, query }) => {
      const deployment = findDeployment(c.get('workspace').id, params.deployment_id);
      const resources = store.revisions(deployment.id, query).map(revisionResponse);
      return c.json({ resources, offset: query.offset + resources.length });
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:deployment_id/revisions/:revision_id',
      summary: 'Get a revision',
      params: revisionIdParams,
      response: { status: 200, description: 'The revision', schema: revisionResponseSchema },
      errors: [REVISION_NOT_FOUND],
    },
    (c, { params }) => {
      const deployment = findDeployment(c.get('workspace').id, params.deployment_id);
      return c.json(revisionResponse(findRevision(deployment.id, params.revision_id)));
    },
  );

  return app;
}

/** /v1/integrations/forge/codehost: the workspace's codehost integrations and their repositories (E6). */
export function codehostRoutes(deps: DeploymentRouteDeps) {
  const app = workspaceApp('codehost', deps);

  app.openapi(
    { method: 'get', path: '/install', summary: "List the workspace's codehost integrations", response: { status: 200, description: 'The integrations', schema: z.array(codehostIntegrationSchema) } },
    (c) => c.json(deps.store.integrations(c.get('workspace').id).map(codehostIntegrationResponse)),
  );

  app.openapi(
    {
      method: 'get',
      path: '/:integration_id/repos',
      summary: "List a codehost integration's repositories",
      params: integrationIdParams,
      response: { status: 200, description: 'The repositories', schema: z.array(codehostRepositorySchema) },
      errors: [notFoundError('Codehost integration', `Codehost integration ID ${EXAMPLE_ID} not found.`)],
    },
    (c, { params }) => {
      const integration = deps.store.integration(c.get('workspace').id, params.integration_id);
      if (!integration) throw notFound(`Codehost integration ID ${params.integration_id} not found.`);
      return c.json(deps.store.repos(integration.id).map(codehostRepositoryResponse));
    },
  );

  return app;
}
