import { z } from 'zod';
import { DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD } from './schemas.ts';

export const PROVIDER_TYPES = ['microsoft', 'salesforce', 'slack'] as const;
export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;

/** OAuthProviderCreateRequest. `client_secret` is write-only: kept, never answered. */
export const oauthProviderCreate = z.object({
  provider_id: z.string(),
  name: z.string(),
  client_id: z.string(),
  client_secret: z.string().nullish(),
  auth_url: z.string(),
  token_url: z.string(),
  uses_pkce: z.boolean().default(false),
  code_challenge_method: z.string().default('S256'),
  provider_type: z.enum(PROVIDER_TYPES).nullish(),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).default(DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD),
});
export type OAuthProviderCreate = z.output<typeof oauthProviderCreate>;

/** OAuthProviderUpdateRequest: null or absent leaves a field as it is. */
export const oauthProviderUpdate = z.object({
  name: z.string().nullish(),
  client_id: z.string().nullish(),
  client_secret: z.string().nullish(),
  auth_url: z.string().nullish(),
  token_url: z.string().nullish(),
  uses_pkce: z.boolean().nullish(),
  code_challenge_method: z.string().nullish(),
});
export type OAuthProviderUpdate = z.output<typeof oauthProviderUpdate>;

/** MCPOAuthProviderCreateRequest: the OAuth endpoints are discovered from the MCP server. */
export const mcpOAuthProviderCreate = z.object({
  provider_id: z.string(),
  name: z.string(),
  mcp_server_url: z.string(),
});
export type McpOAuthProviderCreate = z.output<typeof mcpOAuthProviderCreate>;

export const providerIdParams = z.object({ provider_id: z.string() });

/** What DELETE answers (the service documents its 200 body as any JSON). */
export const providerDeletedSchema = z.object({ message: z.string() });
