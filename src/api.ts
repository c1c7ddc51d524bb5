import { bulkExportRoutes, type BulkExportRouteDeps } from './bulk-exports/routes.ts';
import { OpenApiHono } from './openapi/routes.ts';
import { listenerRoutes } from './deployments/listener-routes.ts';
import { oauthProviderRoutes } from './deployments/oauth-provider-routes.ts';
import { codehostRoutes, deploymentRoutes, type DeploymentWriteDeps } from './deployments/routes.ts';

export interface ApiDeps {
  bulkExports: BulkExportRouteDeps;
  deployments: DeploymentWriteDeps;
}

/** The public API: every family at its prefix (the harness knobs under /_localplane are mounted apart). */
export function apiRoutes(deps: ApiDeps) {
  return new OpenApiHono()
    .route('/api/v1/bulk-exports', bulkExportRoutes(deps.bulkExports))
    .route('/v2/deployments', deploymentRoutes(deps.deployments))
    .route('/v2/listeners', listenerRoutes(deps.deployments))
    .route('/v2/auth/providers', oauthProviderRoutes(deps.deployments))
    .route('/v1/integrations/forge/codehost', codehostRoutes(deps.deployments));
}
