import { z } from 'zod';
import type { RevisionLifecycle } from './lifecycle.ts';
import { revisionHistory } from './logs.ts';
import { deploymentResponse, revisionResponse } from './responses.ts';
import {
  DEPLOYMENT_STATUSES,
  deploymentIdParams,
  deploymentResponseSchema,
  REVISION_STATUSES,
  revisionHistorySchema,
  revisionIdParams,
  revisionResponseSchema,
} from './schemas.ts';
import type { DeploymentStore } from './store.ts';
import type { Clock } from '../shared/clock.ts';
import { notFound } from '../shared/errors.ts';
import { formatTimestamp } from '../shared/time.ts';
import { EXAMPLE_ID, httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';

export interface DeploymentKnobDeps {
  deployments: DeploymentStore;
  lifecycle: RevisionLifecycle;
  clock: Pick<Clock, 'now'>;
}

const deploymentStatusChange = z.object({ status: z.enum(DEPLOYMENT_STATUSES) });
const revisionStatusChange = z.object({ status: z.enum(REVISION_STATUSES) });

/** /_localplane/deployments: force a deployment's or a revision's status, whatever workspace it is in. */
export function deploymentKnobRoutes({ deployments, lifecycle, clock }: DeploymentKnobDeps) {
  const app = new OpenApiHono('admin');

  const findDeployment = (id: string) => {
    const deployment = deployments.deploymentById(id);
    if (!deployment) throw notFound(`Deployment ID ${id} not found.`);
    return deployment;
  };

  app.openapi(
    {
      method: 'put',
      path: '/:deployment_id/status',
      summary: "Force a deployment's status, in any workspace",
      params: deploymentIdParams,
      body: deploymentStatusChange,
      response: { status: 200, description: 'The deployment', schema: deploymentResponseSchema },
      errors: [notFoundError('Deployment', `Deployment ID ${EXAMPLE_ID} not found.`)],
    },
    (c, { params: { deployment_id }, body: { status } }) => {
      deployments.setDeploymentStatus(findDeployment(deployment_id).id, status, clock.now());
      return c.json(deploymentResponse(findDeployment(deployment_id)));
    },
  );

  const revisionNotFound = httpError(404, 'The deployment or the revision does not exist', {
    deployment_not_found: `Deployment ID ${EXAMPLE_ID} not found.`,
    revision_not_found: `Revision ID ${EXAMPLE_ID} not found.`,
  });
  const findRevision = (deploymentId: string, revisionId: string) => {
    const revision = deployments.revision(findDeployment(deploymentId).id, revisionId);
    if (!revision) throw notFound(`Revision ID ${revisionId} not found.`);
    return revision;
  };

  app.openapi(
    {
      method: 'get',
      path: '/:deployment_id/revisions/:revision_id/history',
      summary: "A revision's statuses, each with the emulator-clock time it reached it, in any workspace",
      params: revisionIdParams,
      response: { status: 200, description: 'The statuses, oldest first', schema: revisionHistorySchema },
      errors: [revisionNotFound],
    },
    (c, { params: { deployment_id, revision_id } }) => {
      const revision = findRevision(deployment_id, revision_id);
      const history = revisionHistory(revision, deployments.revisionEvents(revision.id));
      return c.json(history.map(({ status, at, detail }) => ({ status, at: formatTimestamp(at), detail })));
    },
  );

  app.openapi(
    {
      method: 'put',
      path: '/:deployment_id/revisions/:revision_id/status',
      summary: "Force a revision's status, in any workspace (the lifecycle goes on from there)",
      params: revisionIdParams,
      body: revisionStatusChange,
      response: { status: 200, description: 'The revision', schema: revisionResponseSchema },
      errors: [revisionNotFound],
    },
    (c, { params: { deployment_id, revision_id }, body: { status } }) => {
      lifecycle.setStatus(findRevision(deployment_id, revision_id), status);
      return c.json(revisionResponse(deployments.revision(deployment_id, revision_id)!));
    },
  );

  return app;
}
