import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.ts';
import type { Workspace, WorkspaceStore } from '../workspaces/store.ts';

export interface AuthVariables {
  workspace: Workspace;
}

/**
 * X-API-Key names the caller's workspace; X-Tenant-Id, when sent, must be that workspace.
 * 401 for a missing or unknown key, 403 for a key of another workspace.
 */
export function requireWorkspace(workspaces: WorkspaceStore): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    if (!apiKey) throw new HttpError(401, 'Not authenticated: send an API key in the X-API-Key header');
    const workspace = workspaces.findByApiKey(apiKey);
    if (!workspace) throw new HttpError(401, 'Invalid token');
    const tenantId = c.req.header('x-tenant-id');
    if (tenantId !== undefined && tenantId.toLowerCase() !== workspace.id) {
      throw new HttpError(403, 'Forbidden: the API key does not belong to the workspace in X-Tenant-Id');
    }
    c.set('workspace', workspace);
    await next();
  };
}
