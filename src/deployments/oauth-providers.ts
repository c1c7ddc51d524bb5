import { badRequest, conflict, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { Micros } from '../shared/time.ts';
import type { McpOAuthProviderCreate, OAuthProviderCreate, OAuthProviderUpdate } from './oauth-provider-schemas.ts';
import type { DeploymentStore, OAuthProviderRow } from './store.ts';

export const providerNotFound = (providerId: string) => `OAuth provider ${providerId} not found.`;
export const duplicateProvider = (providerId: string) => `OAuth provider ${providerId} already exists.`;
export const discoveryFailed = (url: string) =>
  `Failed to discover OAuth metadata for MCP server ${url}: no OAuth authorization server metadata was found at the ` +
  `server.`;

interface ProviderContext {
  tenantId: string;
  ids: IdGenerator;
  now: Micros;
}

export function findProvider(store: DeploymentStore, tenantId: string, providerId: string): OAuthProviderRow {
  const provider = store.provider(tenantId, providerId);
  if (!provider) throw notFound(providerNotFound(providerId));
  return provider;
}

/**
 * The fields every new provider has: its ids, its organization, its times; provider_id is unique in the workspace
 * (409).
 */
function providerBase(store: DeploymentStore, providerId: string, context: ProviderContext) {
  if (store.provider(context.tenantId, providerId)) throw conflict(duplicateProvider(providerId));
  return {
    id: context.ids.uuid(),
    tenant_id: context.tenantId,
    // A workspace the deployment fixtures leave out has no organization of record: it stands for its own.
    organization_id: store.organizationOf(context.tenantId) ?? context.tenantId,
    provider_id: providerId,
    created_at: context.now,
    updated_at: context.now,
  };
}

export function newProvider(
  store: DeploymentStore,
  body: OAuthProviderCreate,
  context: ProviderContext,
): OAuthProviderRow {
  return {
    ...providerBase(store, body.provider_id, context),
    name: body.name,
    client_id: body.client_id,
    client_secret: body.client_secret ?? null,
    auth_url: body.auth_url,
    token_url: body.token_url,
    uses_pkce: body.uses_pkce ? 1 : 0,
    code_challenge_method: body.code_challenge_method,
    provider_type: body.provider_type ?? null,
    mcp_server_url: null,
    token_endpoint_auth_method: body.token_endpoint_auth_method,
    is_dynamic_client: 0,
  };
}

/**
 * mcp-discover. There is no network here: the MCP servers that can be discovered are those the
 * fixtures' providers name in `mcp_server_url`, with their authorization and token endpoints.
 * Discovery registers a public client dynamically (PKCE S256, no client secret); its
 * client_id comes from the seeded id sequence.
 */
export function discoveredProvider(
  store: DeploymentStore,
  body: McpOAuthProviderCreate,
  context: ProviderContext,
): OAuthProviderRow {
  const server = store.mcpServerFixture(body.mcp_server_url);
  if (!server) throw badRequest(discoveryFailed(body.mcp_server_url));
  const base = providerBase(store, body.provider_id, context);
  return {
    ...base,
    name: body.name,
    client_id: `lp-dcr-${context.ids.uuid()}`,
    client_secret: null,
    auth_url: server.auth_url,
    token_url: server.token_url,
    uses_pkce: 1,
    code_challenge_method: 'S256',
    provider_type: 'mcp',
    mcp_server_url: body.mcp_server_url,
    token_endpoint_auth_method: 'none',
    is_dynamic_client: 1,
  };
}

export function updatedProvider(current: OAuthProviderRow, update: OAuthProviderUpdate, now: Micros): OAuthProviderRow {
  return {
    ...current,
    name: update.name ?? current.name,
    client_id: update.client_id ?? current.client_id,
    client_secret: update.client_secret ?? current.client_secret,
    auth_url: update.auth_url ?? current.auth_url,
    token_url: update.token_url ?? current.token_url,
    uses_pkce: update.uses_pkce == null ? current.uses_pkce : update.uses_pkce ? 1 : 0,
    code_challenge_method: update.code_challenge_method ?? current.code_challenge_method,
    updated_at: now,
  };
}
