import type { IdGenerator } from '../shared/ids.ts';
import type { Micros } from '../shared/time.ts';
import type { TracingSession } from '../tracing/store.ts';
import type { DeploymentCreate, DeploymentSource, SourceRevisionConfig } from './schemas.ts';
import type { DeploymentRow, RevisionRow } from './store.ts';

/** What a deployment of a non-container source runs as when the request names no deployment_type. */
const DEFAULT_DEPLOYMENT_TYPE = 'dev';

/** A commit sha for a codehost revision: 40 hex digits drawn from the seeded id sequence. */
function commitShaFrom(ids: IdGenerator): string {
  return (ids.uuid() + ids.uuid()).replaceAll('-', '').slice(0, 40);
}

/** A revision in its first state, CREATING; codehost revisions get a repo_commit_sha. */
export function newRevision(
  ids: IdGenerator,
  deploymentId: string,
  source: DeploymentSource,
  config: Omit<SourceRevisionConfig, 'repo_commit_sha'>,
  now: Micros,
): RevisionRow {
  const revisionConfig: SourceRevisionConfig = {
    ...config,
    repo_commit_sha: source === 'codehost' ? commitShaFrom(ids) : null,
  };
  return {
    id: ids.uuid(),
    deployment_id: deploymentId,
    status: 'CREATING',
    source,
    source_revision_config: JSON.stringify(revisionConfig),
    created_at: now,
    updated_at: now,
  };
}

/** The rows E9 creates: the deployment (AWAITING_DATABASE), its revision 1 and its tracing project. */
export function newDeployment(body: DeploymentCreate, context: { tenantId: string; now: Micros; ids: IdGenerator }) {
  const { tenantId, now, ids } = context;
  const { deployment_type: deploymentType, ...storedConfig } = body.source_config;
  const id = ids.uuid();
  const revision = newRevision(ids, id, body.source, body.source_revision_config, now);
  const deployment: DeploymentRow = {
    id,
    tenant_id: tenantId,
    name: body.name,
    source: body.source,
    deployment_type: body.source === 'external_container' ? null : (deploymentType ?? DEFAULT_DEPLOYMENT_TYPE),
    status: 'AWAITING_DATABASE',
    source_config: JSON.stringify(storedConfig),
    secrets: JSON.stringify(body.secrets),
    secret_references: body.secret_references ? JSON.stringify(body.secret_references) : null,
    image_version: null,
    tag_value_ids: '[]',
    remote_reconciled: 0,
    latest_revision_id: revision.id,
    active_revision_id: null,
    created_at: now,
    updated_at: now,
  };
  const project: TracingSession = { id: ids.uuid(), tenant_id: tenantId, name: body.name, created_at: now };
  return { deployment, revision, project };
}

/** A new revision with the source and config of an earlier one (its commit included). */
export function redeployedRevision(ids: IdGenerator, revision: RevisionRow, now: Micros): RevisionRow {
  return { ...revision, id: ids.uuid(), status: 'CREATING', created_at: now, updated_at: now };
}
