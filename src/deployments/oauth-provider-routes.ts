import { z } from 'zod';
import { httpError, notFoundError } from '../openapi/errors.ts';
import {
  mcpOAuthProviderCreate,
  oauthProviderCreate,
  oauthProviderUpdate,
  providerDeletedSchema,
  providerIdParams,
} from './oauth-provider-schemas.ts';
import {
  discoveredProvider,
  discoveryFailed,
  duplicateProvider,
  findProvider,
  newProvider,
  providerNotFound,
  updatedProvider,
} from './oauth-providers.ts';
import { oauthProviderResponse } from './responses.ts';
import { workspaceApp, type DeploymentWriteDeps } from './routes.ts';
import { oauthProviderResponseSchema } from './schemas.ts';

const PROVIDER_NOT_FOUND = notFoundError('OAuth provider', providerNotFound('github'));
const PROVIDER_EXISTS = httpError(409, 'The workspace has a provider of that provider_id', {
  duplicate: duplicateProvider('github'),
});

/** /v2/auth/providers: the workspace's OAuth providers (E5). Client secrets are write-only. */
export function oauthProviderRoutes(deps: Pick<DeploymentWriteDeps, 'store' | 'workspaces' | 'clock' | 'ids'>) {
  const { store } = deps;
  const app = workspaceApp('oauth-providers', deps);
  const context = (tenantId: string) => ({ tenantId, ids: deps.ids, now: deps.clock.now() });

  app.openapi(
    {
      method: 'get',
      path: '/',
      summary: "List the workspace's OAuth providers",
      response: { status: 200, description: 'The providers', schema: z.array(oauthProviderResponseSchema) },
    },
    (c) => c.json(store.providers(c.get('workspace').id).map(oauthProviderResponse)),
  );

  app.openapi(
    {
      method: 'post',
      path: '/',
      summary: 'Create an OAuth provider',
      body: oauthProviderCreate,
      response: { status: 200, description: 'The provider', schema: oauthProviderResponseSchema },
      errors: [PROVIDER_EXISTS],
    },
    (c, { body }) => {
      const row = newProvider(store, body, context(c.get('workspace').id));
      store.insertProvider(row);
      return c.json(oauthProviderResponse(row));
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/mcp-discover',
      summary: "Create an OAuth provider from an MCP server's discovered OAuth metadata (servers of the fixtures)",
      body: mcpOAuthProviderCreate,
      response: { status: 200, description: 'The provider', schema: oauthProviderResponseSchema },
      errors: [
        httpError(400, 'The MCP server has no OAuth metadata to discover', {
          discovery_failed: discoveryFailed('https://mcp.unknown.example/mcp'),
        }),
        PROVIDER_EXISTS,
      ],
    },
    (c, { body }) => {
      const row = discoveredProvider(store, body, context(c.get('workspace').id));
      store.insertProvider(row);
      return c.json(oauthProviderResponse(row));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:provider_id',
      summary: 'Get an OAuth provider',
      response: { status: 200, description: 'The provider', schema: oauthProviderResponseSchema },
      errors: [PROVIDER_NOT_FOUND],
    },
    (c) => c.json(oauthProviderResponse(findProvider(store, c.get('workspace').id, c.req.param('provider_id')!))),
  );

  app.openapi(
    {
      method: 'patch',
      path: '/:provider_id',
      summary: 'Change an OAuth provider',
      params: providerIdParams,
      body: oauthProviderUpdate,
      response: { status: 200, description: 'The provider', schema: oauthProviderResponseSchema },
      errors: [PROVIDER_NOT_FOUND],
    },
    (c, { params, body }) => {
      const row = updatedProvider(
        findProvider(store, c.get('workspace').id, params.provider_id),
        body,
        deps.clock.now(),
      );
      store.updateProvider(row);
      return c.json(oauthProviderResponse(row));
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/:provider_id',
      summary: 'Delete an OAuth provider',
      params: providerIdParams,
      response: { status: 200, description: 'Deleted', schema: providerDeletedSchema },
      errors: [PROVIDER_NOT_FOUND],
    },
    (c, { params }) => {
      const provider = findProvider(store, c.get('workspace').id, params.provider_id);
      store.deleteProvider(provider.id);
      return c.json({ message: `OAuth provider ${provider.provider_id} deleted.` });
    },
  );

  return app;
}
