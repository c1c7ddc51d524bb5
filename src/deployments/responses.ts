import { MASKED_SECRET_VALUE } from '../shared/errors.ts';
import { formatTimestamp } from '../shared/time.ts';
import { nullFiller } from '../shared/validation.ts';
import {
  DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD,
  sourceConfig,
  sourceRevisionConfig,
  type CodehostIntegration,
  type CodehostRepository,
  type DeploymentResponse,
  type OAuthProviderResponse,
  type RevisionResponse,
  type Secret,
  type SecretReference,
} from './schemas.ts';
import type {
  CodehostIntegrationRow,
  CodehostRepoRow,
  DeploymentView,
  OAuthProviderRow,
  RevisionRow,
} from './store.ts';

const fillSourceConfig = nullFiller(sourceConfig);
const fillRevisionConfig = nullFiller(sourceRevisionConfig);

/** Every field of a source revision config, null where the stored JSON has none. */
const revisionConfigOf = (json: string | null) => fillRevisionConfig(json === null ? {} : JSON.parse(json));

export function deploymentResponse(row: DeploymentView): DeploymentResponse {
  const secrets = JSON.parse(row.secrets) as Secret[];
  return {
    name: row.name,
    source: row.source,
    source_config: fillSourceConfig({ ...JSON.parse(row.source_config), deployment_type: row.deployment_type }),
    source_revision_config: revisionConfigOf(row.latest_source_revision_config),
    secrets: secrets.map(({ name }) => ({ name, value: MASKED_SECRET_VALUE })),
    secret_references: row.secret_references === null ? null : (JSON.parse(row.secret_references) as SecretReference[]),
    id: row.id,
    tenant_id: row.tenant_id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    status: row.status,
    latest_revision_id: row.latest_revision_id,
    active_revision_id: row.active_revision_id,
    image_version: row.image_version,
  };
}

export function revisionResponse(row: RevisionRow): RevisionResponse {
  return {
    id: row.id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    status: row.status,
    source: row.source,
    source_revision_config: revisionConfigOf(row.source_revision_config),
  };
}

export function oauthProviderResponse(row: OAuthProviderRow): OAuthProviderResponse {
  return {
    id: row.id,
    organization_id: row.organization_id,
    provider_id: row.provider_id,
    name: row.name,
    client_id: row.client_id,
    auth_url: row.auth_url,
    token_url: row.token_url,
    uses_pkce: row.uses_pkce === 1,
    code_challenge_method: row.code_challenge_method,
    provider_type: row.provider_type,
    mcp_server_url: row.mcp_server_url,
    token_endpoint_auth_method: row.token_endpoint_auth_method ?? DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD,
    is_dynamic_client: row.is_dynamic_client === 1,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}

export function codehostIntegrationResponse(row: CodehostIntegrationRow): CodehostIntegration {
  return { id: row.id, installation_id: row.installation_id, name: row.name };
}

export function codehostRepositoryResponse(row: CodehostRepoRow): CodehostRepository {
  return {
    host_integration_id: row.integration_id,
    id: row.id,
    name: row.name,
    owner: row.owner,
    url: row.url,
    default_branch: row.default_branch,
  };
}
