import { badRequest, conflict, HttpError, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import { formatTimestamp, type Micros } from '../shared/time.ts';
import type { ListenerComputeConfig, ListenerCreate, ListenerPatch, ListenerResponse } from './listener-schemas.ts';
import type { DeploymentStore, ListenerRow } from './store.ts';

export const listenerNotFound = (id: string) => `Listener ID ${id} not found.`;
export const listenersRefused = (tenantId: string) =>
  `Listeners cannot be created for the service workspace ID '${tenantId}'. Creating listeners is only allowed for ` +
  `the service organizations with self-hosted enterprise plans.`;
export const duplicateListener = (tenantId: string, computeId: string) =>
  `Listener for the service workspace ID '${tenantId}' and compute ID '${computeId}' already exists.`;
export const listenerInUse = (id: string, deploymentIds: readonly string[]) =>
  `Listener ID ${id} is used by deployment(s) ${deploymentIds.join(', ')}. Delete those deployments first.`;
export const NAMESPACES_REQUIRED =
  'compute_config.k8s_namespaces must name at least one namespace for compute_type k8s.';

/** Listeners belong to self-hosted workspaces: any other is refused (403) on every call that names or makes one. */
export function checkListenersAllowed(store: DeploymentStore, tenantId: string): void {
  if (!store.isSelfHosted(tenantId)) throw new HttpError(403, listenersRefused(tenantId));
}

/** A k8s listener runs deployments in its namespaces: it needs at least one. */
function storedComputeConfig(config: ListenerComputeConfig): string {
  const namespaces = config.k8s_namespaces ?? [];
  if (namespaces.length === 0 || namespaces.some((namespace) => namespace === ''))
    throw badRequest(NAMESPACES_REQUIRED);
  return JSON.stringify({ k8s_namespaces: namespaces });
}

export function findListener(store: DeploymentStore, tenantId: string, id: string): ListenerRow {
  const listener = store.listener(tenantId, id);
  if (!listener) throw notFound(listenerNotFound(id));
  return listener;
}

/** A new listener's row: its compute id is unique in the workspace (409). */
export function newListener(
  store: DeploymentStore,
  body: ListenerCreate,
  context: { tenantId: string; ids: IdGenerator; now: Micros },
): ListenerRow {
  if (store.listenerByComputeId(context.tenantId, body.compute_id))
    throw conflict(duplicateListener(context.tenantId, body.compute_id));
  return {
    id: context.ids.uuid(),
    tenant_id: context.tenantId,
    compute_type: body.compute_type,
    compute_id: body.compute_id,
    compute_config: storedComputeConfig(body.compute_config),
    version: body.version ?? null,
    created_at: context.now,
    updated_at: context.now,
  };
}

export function patchedListener(current: ListenerRow, patch: ListenerPatch, now: Micros): ListenerRow {
  return {
    ...current,
    version: patch.version ?? current.version,
    compute_config: patch.compute_config ? storedComputeConfig(patch.compute_config) : current.compute_config,
    updated_at: now,
  };
}

/** A listener that deployments run on stays: deleting it is refused (409) until they are deleted. */
export function checkListenerUnused(store: DeploymentStore, listener: ListenerRow): void {
  const users = store.listenerUsers(listener.tenant_id, listener.id);
  if (users.length > 0) throw conflict(listenerInUse(listener.id, users));
}

export function listenerResponse(row: ListenerRow): ListenerResponse {
  const config = JSON.parse(row.compute_config) as { k8s_namespaces?: string[] | null };
  return {
    version: row.version,
    compute_type: row.compute_type,
    compute_id: row.compute_id,
    compute_config: { k8s_namespaces: config.k8s_namespaces ?? null },
    id: row.id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}
