import type { MiddlewareHandler } from 'hono';
import type { GuardDocumentation, SecurityScheme } from '../openapi/declarations.ts';
import { httpError } from '../openapi/errors.ts';
import { HttpError } from '../shared/errors.ts';
import type { Workspace, WorkspaceStore } from './store.ts';

export const MISSING_API_KEY = 'Not authenticated: send an API key in the X-API-Key header';
export const INVALID_API_KEY = 'Invalid token';
export const WRONG_TENANT = 'Forbidden: the API key does not belong to the workspace in X-Tenant-Id';

/** The hosted service's schemes of the same names (its reference OpenAPI document's). */
const API_KEY = {
  id: 'API Key',
  scheme: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: "A workspace's API key (GET /_localplane/fixtures lists them); it names the workspace",
  },
} satisfies SecurityScheme;
const TENANT_ID = {
  id: 'Tenant ID',
  scheme: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Tenant-Id',
    description:
      'The workspace id, which the hosted service requires with the key; localplane takes it or leaves it out, ' +
      "but refuses another workspace's (403)",
  },
} satisfies SecurityScheme;

/** What requireWorkspace reads and refuses, as a guard documents it. */
export const WORKSPACE_AUTH: GuardDocumentation = {
  errors: [
    httpError(401, 'No API key, or an unknown one', {
      missing_api_key: MISSING_API_KEY,
      invalid_api_key: INVALID_API_KEY,
    }),
    httpError(403, 'The API key belongs to another workspace than X-Tenant-Id', { wrong_tenant: WRONG_TENANT }),
  ],
  // The hosted service's way first; the key alone is enough here.
  security: [[API_KEY, TENANT_ID], [API_KEY]],
};

export interface AuthVariables {
  workspace: Workspace;
}

/**
 * X-API-Key names the caller's workspace; X-Tenant-Id, when sent, must be that workspace.
 * 401 for a missing or unknown key, 403 for a key of another workspace; then `admit` may refuse
 * the workspace by throwing (a plan without the feature): in this middleware, as every
 * middleware costs each request of the routes it guards its own asynchronous step.
 */
export function requireWorkspace(
  workspaces: WorkspaceStore,
  admit?: (workspace: Workspace) => void,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const apiKey = c.req.header(API_KEY.scheme.name);
    if (!apiKey) throw new HttpError(401, MISSING_API_KEY);
    const workspace = workspaces.findByApiKey(apiKey);
    if (!workspace) throw new HttpError(401, INVALID_API_KEY);
    const tenantId = c.req.header(TENANT_ID.scheme.name);
    if (tenantId !== undefined && tenantId.toLowerCase() !== workspace.id) {
      throw new HttpError(403, WRONG_TENANT);
    }
    admit?.(workspace);
    c.set('workspace', workspace);
    await next();
  };
}
