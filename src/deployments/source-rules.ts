import { badRequest } from '../shared/errors.ts';
import type {
  DeploymentCreate,
  DeploymentSource,
  RevisionSource,
  SourceRevisionConfig,
  StoredSourceConfig,
} from './schemas.ts';
import type { DeploymentStore } from './store.ts';

const INTERNAL_SOURCES = ['internal_container', 'internal_source', 'internal_template'];

const sourceError = (message: string) => badRequest(`Source configuration error: ${message}`);

/** The per-source rules of E9; a broken one is a 400 `Source configuration error: ...`. */
export function checkCreateSource(store: DeploymentStore, tenantId: string, body: DeploymentCreate): void {
  const { source, source_config: config, source_revision_config: revisionConfig } = body;
  const selfHosted = store.isSelfHosted(tenantId);
  if (source === 'external_container' && !selfHosted)
    throw sourceError('source external_container is only available for self-hosted deployments.');
  if (INTERNAL_SOURCES.includes(source) && selfHosted)
    throw sourceError(`source ${source} is not available for self-hosted deployments.`);
  if (source === 'codehost') checkCodehost(store, tenantId, body);
  if (config.listener_id && !store.listener(tenantId, config.listener_id)) {
    throw sourceError(`listener_id ${config.listener_id} is not a listener of this workspace.`);
  }
  if (source === 'external_container' && !revisionConfig.image_uri)
    throw sourceError('image_uri is required for source external_container.');
  if (config.build_on_push && revisionConfig.repo_ref?.startsWith('refs/tags/')) {
    throw sourceError('build_on_push cannot be enabled when repo_ref is a tag (refs/tags/...).');
  }
  if (body.secret_references && source !== 'external_container')
    throw sourceError('secret_references are only applicable to source external_container.');
}

function checkCodehost(
  store: DeploymentStore,
  tenantId: string,
  { source_config: config, source_revision_config: revisionConfig }: DeploymentCreate,
) {
  if (!config.integration_id) throw sourceError('integration_id is required for source codehost.');
  const integration = store.integration(tenantId, config.integration_id);
  if (!integration)
    throw sourceError(`integration_id ${config.integration_id} is not a codehost integration of this workspace.`);
  if (!config.repo_url) throw sourceError('repo_url is required for source codehost.');
  if (!store.repos(integration.id).some((repo) => repo.url === config.repo_url)) {
    throw sourceError(`repo_url ${config.repo_url} is not a repository of integration ${integration.id}.`);
  }
  if (!revisionConfig.repo_ref) throw sourceError('repo_ref is required for source codehost.');
  if (!revisionConfig.graph_config_path) throw sourceError('graph_config_path is required for source codehost.');
}

/** What a revision of each source builds from. */
type RevisionRequestConfig = Omit<SourceRevisionConfig, 'repo_commit_sha'>;
const REVISION_SOURCE_NEEDS: Record<RevisionSource, readonly (keyof RevisionRequestConfig)[]> = {
  codehost: ['repo_ref', 'graph_config_path'],
  internal_container: ['image_uri'],
  internal_source: ['source_tarball_path'],
};

/**
 * E7's revision_source: a self-hosted (external_container) deployment has no other source;
 * a codehost revision needs the deployment's repository; the revision needs what its source
 * builds from, taken from the patch or else from the latest revision.
 */
export function checkRevisionSource(
  deployment: { source: DeploymentSource; config: StoredSourceConfig },
  revisionSource: RevisionSource,
  revisionConfig: RevisionRequestConfig,
): void {
  if (deployment.source === 'external_container')
    throw sourceError('revision_source is not applicable to source external_container.');
  if (revisionSource === 'codehost' && !(deployment.config.integration_id && deployment.config.repo_url)) {
    throw sourceError(
      'revision_source codehost needs a deployment connected to a codehost repository (integration_id and repo_url).',
    );
  }
  for (const field of REVISION_SOURCE_NEEDS[revisionSource]) {
    if (!revisionConfig[field]) throw sourceError(`${field} is required for revision_source ${revisionSource}.`);
  }
}
