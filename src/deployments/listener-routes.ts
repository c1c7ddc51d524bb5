import { EXAMPLE_ID, httpError, notFoundError } from '../openapi/errors.ts';
import {
  listenerCreate,
  listenerIdParams,
  listenerPatch,
  listenerResponseSchema,
  listenersListSchema,
  listenersQuery,
} from './listener-schemas.ts';
import {
  checkListenersAllowed,
  checkListenerUnused,
  duplicateListener,
  findListener,
  listenerInUse,
  listenerNotFound,
  listenerResponse,
  listenersRefused,
  NAMESPACES_REQUIRED,
  newListener,
  patchedListener,
} from './listeners.ts';
import { workspaceApp, type DeploymentWriteDeps } from './routes.ts';

const EXAMPLE_WORKSPACE = '00000000-0000-4000-8000-000000000001';
const LISTENERS_REFUSED = httpError(403, 'The workspace is not self-hosted', {
  not_self_hosted: listenersRefused(EXAMPLE_WORKSPACE),
});
const LISTENER_NOT_FOUND = notFoundError('Listener', listenerNotFound(EXAMPLE_ID));
const NAMESPACES_MISSING = httpError(400, 'A k8s listener names no namespace', {
  k8s_namespaces_required: NAMESPACES_REQUIRED,
});

/** /v2/listeners: the compute a self-hosted workspace's `external_container` deployments run on. */
export function listenerRoutes(deps: Pick<DeploymentWriteDeps, 'store' | 'workspaces' | 'clock' | 'ids'>) {
  const { store } = deps;
  const app = workspaceApp('listeners', deps);

  app.openapi(
    {
      method: 'get',
      path: '/',
      summary: "List the workspace's listeners, oldest first",
      query: listenersQuery,
      response: { status: 200, description: 'A page of listeners', schema: listenersListSchema },
    },
    (c, { query }) => {
      const resources = store.listenersPage(c.get('workspace').id, query).map(listenerResponse);
      return c.json({ resources, offset: query.offset + resources.length });
    },
  );

  app.openapi(
    {
      method: 'post',
      path: '/',
      summary: 'Create a listener (self-hosted workspaces only)',
      body: listenerCreate,
      response: { status: 201, description: 'The listener', schema: listenerResponseSchema },
      errors: [
        NAMESPACES_MISSING,
        LISTENERS_REFUSED,
        httpError(409, 'The workspace has a listener of that compute_id', {
          duplicate: duplicateListener(EXAMPLE_WORKSPACE, 'k8s-prod'),
        }),
      ],
    },
    (c, { body }) => {
      const tenantId = c.get('workspace').id;
      checkListenersAllowed(store, tenantId);
      const row = newListener(store, body, { tenantId, ids: deps.ids, now: deps.clock.now() });
      store.insertListener(row);
      return c.json(listenerResponse(row), 201);
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:listener_id',
      summary: 'Get a listener',
      params: listenerIdParams,
      response: { status: 200, description: 'The listener', schema: listenerResponseSchema },
      errors: [LISTENERS_REFUSED, LISTENER_NOT_FOUND],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      checkListenersAllowed(store, tenantId);
      return c.json(listenerResponse(findListener(store, tenantId, params.listener_id)));
    },
  );

  app.openapi(
    {
      method: 'patch',
      path: '/:listener_id',
      summary: "Change a listener's version or namespaces",
      params: listenerIdParams,
      body: listenerPatch,
      response: { status: 200, description: 'The listener', schema: listenerResponseSchema },
      errors: [NAMESPACES_MISSING, LISTENERS_REFUSED, LISTENER_NOT_FOUND],
    },
    (c, { params, body }) => {
      const tenantId = c.get('workspace').id;
      checkListenersAllowed(store, tenantId);
      const row = patchedListener(findListener(store, tenantId, params.listener_id), body, deps.clock.now());
      store.updateListener(row);
      return c.json(listenerResponse(row));
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/:listener_id',
      summary: 'Delete a listener no deployment runs on',
      params: listenerIdParams,
      response: { status: 204, description: 'Deleted' },
      errors: [
        LISTENERS_REFUSED,
        LISTENER_NOT_FOUND,
        httpError(409, 'Deployments run on the listener', { in_use: listenerInUse(EXAMPLE_ID, [EXAMPLE_ID]) }),
      ],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      checkListenersAllowed(store, tenantId);
      const listener = findListener(store, tenantId, params.listener_id);
      checkListenerUnused(store, listener);
      store.deleteListener(listener.id);
      return c.body(null, 204);
    },
  );

  return app;
}
