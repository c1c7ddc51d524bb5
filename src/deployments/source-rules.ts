import { badRequest } from '../shared/errors.ts';
import type { DeploymentCreate } from './schemas.ts';
import type { DeploymentStore } from './store.ts';

const INTERNAL_SOURCES = ['internal_container', 'internal_source', 'internal_template'];

const sourceError = (message: string) => badRequest(`Source configuration error: ${message}`);

/** The per-source rules of E9; a broken one is a 400 `Source configuration error: ...`. */
export function checkCreateSource(store: DeploymentStore, tenantId: string, body: DeploymentCreate): void {
  const { source, source_config: config, source_revision_config: revisionConfig } = body;
  const selfHosted = store.isSelfHosted(tenantId);
  if (source === 'external_container' && !selfHosted) throw sourceError('source external_container is only available for self-hosted deployments.');
  if (INTERNAL_SOURCES.includes(source) && selfHosted) throw sourceError(`source ${source} is not available for self-hosted deployments.`);
  if (source === 'codehost') checkCodehost(store, tenantId, body);
  if (source === 'external_container' && !revisionConfig.image_uri) throw sourceError('image_uri is required for source external_container.');
  if (config.build_on_push && revisionConfig.repo_ref?.startsWith('refs/tags/')) {
    throw sourceError('build_on_push cannot be enabled when repo_ref is a tag (refs/tags/...).');
  }
  if (body.secret_references && source !== 'external_container') throw sourceError('secret_references are only applicable to source external_container.');
}

function checkCodehost(store: DeploymentStore, tenantId: string, { source_config: config, source_revision_config: revisionConfig }: DeploymentCreate) {
  if (!config.integration_id) throw sourceError('integration_id is required for source codehost.');
  const integration = store.integration(tenantId, config.integration_id);
  if (!integration) throw sourceError(`integration_id ${config.integration_id} is not a codehost integration of this workspace.`);
  if (!config.repo_url) throw sourceError('repo_url is required for source codehost.');
  if (!store.repos(integration.id).some((repo) => repo.url === config.repo_url)) {
    throw sourceError(`repo_url ${config.repo_url} is not a repository of integration ${integration.id}.`);
  }
  if (!revisionConfig.repo_ref) throw sourceError('repo_ref is required for source codehost.');
  if (!revisionConfig.graph_config_path) throw sourceError('graph_config_path is required for source codehost.');
}
