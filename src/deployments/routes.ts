import { z } from 'zod';
import { EXAMPLE_ID, httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { requireWorkspace, WORKSPACE_AUTH, type AuthVariables } from '../workspaces/auth.ts';
import type { Clock } from '../shared/clock.ts';
import { unchangingBody, type UnchangingBody } from '../shared/response-capture.ts';
import type { WriteScopedCache } from '../shared/write-scoped-cache.ts';
import { badRequest, conflict, notFound } from '../shared/errors.ts';
import { formatTimestamp, MICROS_PER_HOUR } from '../shared/time.ts';
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
import type { DeploymentDeletions } from './deletions.ts';
import type { RevisionLifecycle } from './lifecycle.ts';
import { logsPage, mergedLog, revisionLog, type LogStream } from './logs.ts';
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
  logsPageSchema,
  logsRequest,
  projectIdParams,
  projectRevisionIdParams,
  pushTokenSchema,
  revisionCreate,
  uploadUrlSchema,
  revisionIdParams,
  revisionResponseSchema,
  revisionsListSchema,
  revisionsQuery,
  REVISIONS_QUERY_LISTS,
  type DeletionResult,
  type DeploymentsList,
  type LogsRequest,
  type SourceRevisionConfig,
} from './schemas.ts';
import type { SourceUploads } from './source-uploads.ts';
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
  deletions: DeploymentDeletions;
  sourceUploads: SourceUploads;
  responseCache: WriteScopedCache<UnchangingBody>;
}

const deploymentNotFound = (id: string) => `Deployment ID ${id} not found.`;
const revisionNotFound = (id: string) => `Revision ID ${id} not found.`;
const DEPLOYMENT_NOT_FOUND = notFoundError('Deployment', deploymentNotFound(EXAMPLE_ID));
const REVISION_NOT_FOUND = httpError(404, 'The deployment or the revision does not exist', {
  deployment_not_found: deploymentNotFound(EXAMPLE_ID),
  revision_not_found: revisionNotFound(EXAMPLE_ID),
});
const SOURCE_CONFIGURATION_ERROR = 'Source configuration error: image_uri is required for source external_container.';
const beingDeleted = (id: string) => `Deployment ID ${id} is being deleted.`;
const BEING_DELETED = httpError(409, 'The deployment is AWAITING_DELETE', { being_deleted: beingDeleted(EXAMPLE_ID) });
const NOT_UPLOADED_EXAMPLE =
  `Source configuration error: ` +
  `source_tarball_path ${EXAMPLE_ID}/${EXAMPLE_ID}/${EXAMPLE_ID}.tar.gz was never uploaded.`;
const PUSH_TOKEN_SOURCE = 'internal_container';
const pushTokenRefused = `push token is only available for '${PUSH_TOKEN_SOURCE}' source deployments`;
const uploadUrlRefused = "upload url is not available for 'external_container' source deployments";
/**
 * Where push tokens let a client push its image: a registry host of the emulated service, one repository per
 * deployment.
 */
const REGISTRY_HOST = 'registry.localplane.test';
const PUSH_TOKEN_HOURS = 1;

/** A deployment of the workspace, or the 404 of any id it does not own. */
function findDeploymentIn(store: DeploymentStore, tenantId: string, id: string) {
  const deployment = store.deployment(tenantId, id);
  if (!deployment) throw notFound(deploymentNotFound(id));
  return deployment;
}

function findRevisionIn(store: DeploymentStore, deploymentId: string, id: string) {
  const revision = store.revision(deploymentId, id);
  if (!revision) throw notFound(revisionNotFound(id));
  return revision;
}

/**
 * An app of the deployment family: every route needs a workspace's API key (and X-Tenant-Id, when sent, names that
 * workspace).
 */
export function workspaceApp(tag: string, deps: DeploymentRouteDeps) {
  return new OpenApiHono<{ Variables: AuthVariables }>(tag).guard(WORKSPACE_AUTH, requireWorkspace(deps.workspaces));
}

/** /v2/deployments: deployments and their revisions. */
export function deploymentRoutes(deps: DeploymentWriteDeps) {
  const { store, lifecycle } = deps;
  const app = workspaceApp('deployments', deps);

  const findDeployment = (tenantId: string, id: string) => findDeploymentIn(store, tenantId, id);
  const findRevision = (deploymentId: string, id: string) => findRevisionIn(store, deploymentId, id);

  /** A deployment that may still change: not AWAITING_DELETE. */
  const findLiveDeployment = (tenantId: string, id: string) => {
    const deployment = findDeployment(tenantId, id);
    if (deployment.status === 'AWAITING_DELETE') throw conflict(beingDeleted(id));
    return deployment;
  };

  /** A source_tarball_path a request gives must name a tarball uploaded through upload-url. */
  const checkTarball = async (tenantId: string, config: Partial<SourceRevisionConfig> | null | undefined) => {
    if (config?.source_tarball_path) await deps.sourceUploads.checkUploaded(tenantId, config.source_tarball_path);
  };

  /**
   * PATCH, or POST revisions (`alwaysNewRevision`): the tarball check is the only await, so nothing runs between the
   * read and the write.
   */
  const patchDeployment = async (
    tenantId: string,
    id: string,
    body: Parameters<typeof applyPatch>[1],
    alwaysNewRevision: boolean,
  ) => {
    await checkTarball(tenantId, body.source_revision_config);
    const patched = applyPatch(findLiveDeployment(tenantId, id), body, {
      ids: deps.ids,
      now: deps.clock.now(),
      alwaysNewRevision,
    });
    store.update(patched.deployment, patched.revision);
    if (patched.revision) lifecycle.started(patched.revision);
    return patched;
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
        body = unchangingBody(
          JSON.stringify({ resources, offset: query.offset + resources.length } satisfies DeploymentsList),
        );
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
        httpError(400, "The source's rules are broken, or the source tarball was never uploaded", {
          source_configuration: SOURCE_CONFIGURATION_ERROR,
          not_uploaded: NOT_UPLOADED_EXAMPLE,
        }),
        httpError(409, 'A tracing project of that name exists', {
          project_exists: 'A tracing project named my-graph already exists in this workspace.',
        }),
      ],
    },
    async (c, { body }) => {
      const tenantId = c.get('workspace').id;
      // The only await comes first: from here to the store's write nothing else can run.
      await checkTarball(tenantId, body.source_revision_config);
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
      summary: 'Delete deployments by id (their tracing projects stay); see deployment_deletion_seconds',
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
        deps.deletions.delete(deployment, { deleteTracingProject: false });
        return { deployment_id: id, deleted: true };
      });
      return c.json({ results }, results.every((result) => result.deleted) ? 200 : 207);
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/:deployment_id',
      summary:
        'Delete a deployment (and, if asked, its tracing project): at once, or AWAITING_DELETE first ' +
        '(deployment_deletion_seconds)',
      params: deploymentIdParams,
      query: deleteDeploymentQuery,
      response: { status: 204, description: 'Deleted' },
      errors: [DEPLOYMENT_NOT_FOUND],
    },
    (c, { params, query }) => {
      deps.deletions.delete(findDeployment(c.get('workspace').id, params.deployment_id), {
        deleteTracingProject: query.delete_tracing_project,
      });
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
          source_configuration:
            'Source configuration error: secret_references are only applicable to source external_container.',
          not_uploaded: NOT_UPLOADED_EXAMPLE,
        }),
        DEPLOYMENT_NOT_FOUND,
        BEING_DELETED,
      ],
    },
    async (c, { params, body }) => {
      const tenantId = c.get('workspace').id;
      const { deployment } = await patchDeployment(tenantId, params.deployment_id, body, false);
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
      errors: [REVISION_NOT_FOUND, BEING_DELETED],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      const deployment = findLiveDeployment(tenantId, params.deployment_id);
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
      method: 'post',
      path: '/:deployment_id/revisions',
      summary: "Create a revision: always a new one, from the latest revision's config and the fields given",
      params: deploymentIdParams,
      body: revisionCreate,
      response: { status: 201, description: 'The revision', schema: revisionResponseSchema },
      errors: [
        httpError(400, 'A source rule is broken, or the source tarball was never uploaded', {
          source_configuration:
            'Source configuration error: source_tarball_path is required for revision_source internal_source.',
          not_uploaded: NOT_UPLOADED_EXAMPLE,
        }),
        DEPLOYMENT_NOT_FOUND,
        BEING_DELETED,
      ],
    },
    async (c, { params, body }) => {
      const { deployment, revision } = await patchDeployment(c.get('workspace').id, params.deployment_id, body, true);
      return c.json(revisionResponse(findRevision(deployment.id, revision!.id)), 201);
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/:deployment_id/push-token',
      summary: "A short-lived token to push an image to the deployment's repository of the service's registry",
      params: deploymentIdParams,
      response: { status: 200, description: 'The token and the registry', schema: pushTokenSchema },
      errors: [
        httpError(400, `The deployment's source is not ${PUSH_TOKEN_SOURCE}`, { wrong_source: pushTokenRefused }),
        DEPLOYMENT_NOT_FOUND,
        BEING_DELETED,
      ],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      const deployment = findLiveDeployment(tenantId, params.deployment_id);
      if (deployment.source !== PUSH_TOKEN_SOURCE) throw badRequest(pushTokenRefused);
      return c.json({
        token: `lp-push-${deps.ids.uuid().replaceAll('-', '')}`,
        registry_url: `https://${REGISTRY_HOST}/${tenantId}/${deployment.id}`,
        expires_at: formatTimestamp(deps.clock.now() + PUSH_TOKEN_HOURS * MICROS_PER_HOUR),
      });
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/:deployment_id/upload-url',
      summary:
        'A presigned URL to PUT a source tarball to (the embedded objstore), and the object_path a revision then names',
      params: deploymentIdParams,
      response: { status: 200, description: 'The upload URL and the object path', schema: uploadUrlSchema },
      errors: [
        httpError(400, 'The deployment deploys a given image', { wrong_source: uploadUrlRefused }),
        DEPLOYMENT_NOT_FOUND,
        BEING_DELETED,
      ],
    },
    async (c, { params }) => {
      const tenantId = c.get('workspace').id;
      const deployment = findLiveDeployment(tenantId, params.deployment_id);
      if (deployment.source === 'external_container') throw badRequest(uploadUrlRefused);
      return c.json(await deps.sourceUploads.uploadUrl(tenantId, deployment.id));
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

/**
 * /v1/projects: the build and deploy logs of revisions, as the hosted CLI reads them (`project_id` is the deployment
 * id).
 */
export function projectLogRoutes(deps: DeploymentRouteDeps) {
  const { store } = deps;
  const app = workspaceApp('deployments', deps);
  const logsResponse = { status: 200, description: 'A page of log entries', schema: logsPageSchema };
  const INVALID_OFFSET = httpError(400, 'The offset is no next_offset of this log', {
    invalid_offset: 'Invalid offset: x is not a next_offset of this log.',
  });

  const revisionLogOf = (tenantId: string, deploymentId: string, revisionId: string, stream: LogStream) => {
    const revision = findRevisionIn(store, findDeploymentIn(store, tenantId, deploymentId).id, revisionId);
    return revisionLog(revision, store.revisionEvents(revision.id), stream);
  };
  const page = (entries: Parameters<typeof logsPage>[0], body: LogsRequest | undefined) =>
    logsPage(entries, body ?? logsRequest.parse({}));

  for (const stream of ['build', 'deploy'] as const) {
    app.openapi(
      {
        method: 'post',
        path: `/:project_id/revisions/:revision_id/${stream}_logs`,
        summary: `A page of a revision's ${stream} log (lines per lifecycle stage, on the emulator clock)`,
        params: projectRevisionIdParams,
        body: logsRequest,
        bodyOptional: true,
        response: logsResponse,
        errors: [INVALID_OFFSET, REVISION_NOT_FOUND],
      },
      (c, { params, body }) =>
        c.json(page(revisionLogOf(c.get('workspace').id, params.project_id, params.revision_id, stream), body)),
    );
  }

  app.openapi(
    {
      method: 'post',
      path: '/:project_id/deploy_logs',
      summary: "A page of the deploy logs of all the deployment's revisions",
      params: projectIdParams,
      body: logsRequest,
      bodyOptional: true,
      response: logsResponse,
      errors: [INVALID_OFFSET, DEPLOYMENT_NOT_FOUND],
    },
    (c, { params, body }) => {
      const deployment = findDeploymentIn(store, c.get('workspace').id, params.project_id);
      const logs = store
        .revisionsOf(deployment.id)
        .reverse()
        .map((revision) => revisionLog(revision, store.revisionEvents(revision.id), 'deploy'));
      return c.json(page(mergedLog(logs), body));
    },
  );

  return app;
}

/** /v1/integrations/forge/codehost: the workspace's codehost integrations and their repositories (E6). */
export function codehostRoutes(deps: DeploymentRouteDeps) {
  const app = workspaceApp('codehost', deps);

  app.openapi(
    {
      method: 'get',
      path: '/install',
      summary: "List the workspace's codehost integrations",
      response: { status: 200, description: 'The integrations', schema: z.array(codehostIntegrationSchema) },
    },
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
