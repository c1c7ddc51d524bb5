import { Hono } from 'hono';
import { z } from 'zod';
import type { RevisionLifecycle } from '../deployments/lifecycle.ts';
import { deploymentResponse, revisionResponse } from '../deployments/responses.ts';
import { DEPLOYMENT_STATUSES, REVISION_STATUSES, deploymentIdParams, revisionIdParams } from '../deployments/schemas.ts';
import type { DeploymentStore } from '../deployments/store.ts';
import type { Clock } from '../shared/clock.ts';
import { notFound } from '../shared/errors.ts';
import { jsonBody, pathParams } from '../shared/validation.ts';

export interface DeploymentKnobDeps {
  deployments: DeploymentStore;
  lifecycle: RevisionLifecycle;
  clock: Pick<Clock, 'now'>;
}

const deploymentStatusChange = z.object({ status: z.enum(DEPLOYMENT_STATUSES) });
const revisionStatusChange = z.object({ status: z.enum(REVISION_STATUSES) });

/** /_localplane/deployments: force a deployment's or a revision's status, whatever workspace it is in. */
export function deploymentKnobRoutes({ deployments, lifecycle, clock }: DeploymentKnobDeps) {
  const app = new Hono();

  const findDeployment = (id: string) => {
    const deployment = deployments.deploymentById(id);
    if (!deployment) throw notFound(`Deployment ID ${id} not found.`);
    return deployment;
  };

  app.put('/:deployment_id/status', async (c) => {
    const { deployment_id } = pathParams(c, deploymentIdParams);
    const { status } = await jsonBody(c, deploymentStatusChange);
    deployments.setDeploymentStatus(findDeployment(deployment_id).id, status, clock.now());
    return c.json(deploymentResponse(findDeployment(deployment_id)));
  });

  app.put('/:deployment_id/revisions/:revision_id/status', async (c) => {
    const { deployment_id, revision_id } = pathParams(c, revisionIdParams);
    const { status } = await jsonBody(c, revisionStatusChange);
    const deployment = findDeployment(deployment_id);
    const revision = deployments.revision(deployment.id, revision_id);
    if (!revision) throw notFound(`Revision ID ${revision_id} not found.`);
    lifecycle.setStatus(revision, status);
    return c.json(revisionResponse(deployments.revision(deployment.id, revision_id)!));
  });

  return app;
}
