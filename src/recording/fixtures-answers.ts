/**
 * What a recording's answers show of each resource: its latest state (the last successful answer
 * about it, in the recording's order), less the resources a recorded DELETE removed.
 */
import { bodyJson, headerValue, type HarLog } from './har.ts';

/** A resource as an answer showed it: its JSON object, and the workspace the exchange named. */
export interface Answered {
  answer: Record<string, unknown>;
  /** The request's X-Tenant-Id, else the answer's tenant_id; undefined when neither says. */
  tenantId: string | undefined;
}

export interface RecordedState {
  deployments: Map<string, Answered>;
  /** By deployment id, then revision id. */
  revisions: Map<string, Map<string, Answered>>;
  /** By provider_id, the key the API addresses a provider by. */
  oauthProviders: Map<string, Answered>;
  listeners: Map<string, Answered>;
  codehostIntegrations: Map<string, Answered>;
  /** By integration id: the repositories its last listing answered. */
  codehostRepos: Map<string, Answered[]>;
  destinations: Map<string, Answered>;
  exports: Map<string, Answered>;
  /** How many answers about export runs the recording holds (runs are not placed). */
  exportRunAnswers: number;
  /** The workspaces the exchanges named, in the order they first did. */
  tenantIds: string[];
  /**
   * What a DELETE removed, as `<kind> <id>`: a later answer (a deployment still AWAITING_DELETE) does not bring it
   * back.
   */
  removed: Set<string>;
}

type Kind = 'deployments' | 'oauthProviders' | 'listeners' | 'codehostIntegrations' | 'destinations' | 'exports';

/** How one successful exchange changes the state: `match` gives the path's named parts. */
interface Route {
  method: RegExp;
  path: RegExp;
  apply(
    state: RecordedState,
    exchange: { parts: Record<string, string>; body: unknown; tenantId: string | undefined },
  ): void;
}

const ID = '(?<id>[^/]+)';
/** Where the API's paths begin in a URL: a base URL may put a prefix before them. */
const API_ROOTS =
  /\/(?:v2\/(?:deployments|listeners|auth\/providers)|v1\/integrations\/forge\/codehost|api\/v1\/bulk-exports)(?:\/|$)/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The objects of a list answer: a JSON array, or a page's `resources`. */
function itemsOf(body: unknown): Record<string, unknown>[] {
  const items = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.resources) ? body.resources : [];
  return items.filter(isObject);
}

function answered(answer: Record<string, unknown>, tenantId: string | undefined): Answered {
  return { answer, tenantId: tenantId ?? (typeof answer.tenant_id === 'string' ? answer.tenant_id : undefined) };
}

/** Keeps the answer as the resource's latest state, under its `key` field. */
function keep(state: RecordedState, kind: Kind, body: unknown, tenantId: string | undefined, key = 'id'): void {
  if (!isObject(body) || typeof body[key] !== 'string' || state.removed.has(`${kind} ${body[key]}`)) return;
  const resources = state[kind];
  resources.delete(body[key]); // A later answer comes last in the listing order too.
  resources.set(body[key], answered(body, tenantId));
}

const keepEach =
  (kind: Kind, key = 'id'): Route['apply'] =>
  (state, { body, tenantId }) => {
    for (const item of itemsOf(body)) keep(state, kind, item, tenantId, key);
  };
const keepOne =
  (kind: Kind, key = 'id'): Route['apply'] =>
  (state, { body, tenantId }) =>
    keep(state, kind, body, tenantId, key);
function forget(state: RecordedState, kind: Kind, id: string): void {
  state[kind].delete(id);
  state.removed.add(`${kind} ${id}`);
}

const forgetOne =
  (kind: Kind): Route['apply'] =>
  (state, { parts }) =>
    forget(state, kind, parts.id!);

function keepRevision(state: RecordedState, deploymentId: string, body: unknown, tenantId: string | undefined): void {
  if (!isObject(body) || typeof body.id !== 'string') return;
  const revisions = state.revisions.get(deploymentId) ?? new Map<string, Answered>();
  revisions.set(body.id, answered(body, tenantId));
  state.revisions.set(deploymentId, revisions);
}

function forgetDeployment(state: RecordedState, id: string): void {
  forget(state, 'deployments', id);
  state.revisions.delete(id);
}

const ROUTES: readonly Route[] = [
  { method: /^GET$/, path: /^\/v2\/deployments$/, apply: keepEach('deployments') },
  { method: /^POST$/, path: /^\/v2\/deployments$/, apply: keepOne('deployments') },
  { method: /^(GET|PATCH)$/, path: new RegExp(`^/v2/deployments/${ID}$`), apply: keepOne('deployments') },
  {
    method: /^POST$/,
    path: new RegExp(`^/v2/deployments/${ID}/revisions/[^/]+/redeploy$`),
    apply: keepOne('deployments'),
  },
  {
    method: /^DELETE$/,
    path: new RegExp(`^/v2/deployments/${ID}$`),
    apply: (state, { parts }) => forgetDeployment(state, parts.id!),
  },
  {
    method: /^DELETE$/,
    path: /^\/v2\/deployments$/,
    apply: (state, { body }) => {
      const results = isObject(body) && Array.isArray(body.results) ? body.results.filter(isObject) : [];
      for (const result of results)
        if (result.deleted === true && typeof result.deployment_id === 'string')
          forgetDeployment(state, result.deployment_id);
    },
  },
  {
    method: /^GET$/,
    path: new RegExp(`^/v2/deployments/${ID}/revisions$`),
    apply: (state, { parts, body, tenantId }) =>
      itemsOf(body).forEach((item) => keepRevision(state, parts.id!, item, tenantId)),
  },
  {
    method: /^(GET|POST)$/,
    path: new RegExp(`^/v2/deployments/${ID}/revisions(/[^/]+)?$`),
    apply: (state, { parts, body, tenantId }) => keepRevision(state, parts.id!, body, tenantId),
  },
  { method: /^GET$/, path: /^\/v2\/listeners$/, apply: keepEach('listeners') },
  { method: /^POST$/, path: /^\/v2\/listeners$/, apply: keepOne('listeners') },
  { method: /^(GET|PATCH)$/, path: new RegExp(`^/v2/listeners/${ID}$`), apply: keepOne('listeners') },
  { method: /^DELETE$/, path: new RegExp(`^/v2/listeners/${ID}$`), apply: forgetOne('listeners') },
  { method: /^GET$/, path: /^\/v2\/auth\/providers$/, apply: keepEach('oauthProviders', 'provider_id') },
  {
    method: /^POST$/,
    path: /^\/v2\/auth\/providers(\/mcp-discover)?$/,
    apply: keepOne('oauthProviders', 'provider_id'),
  },
  {
    method: /^(GET|PATCH)$/,
    path: new RegExp(`^/v2/auth/providers/${ID}$`),
    apply: keepOne('oauthProviders', 'provider_id'),
  },
  { method: /^DELETE$/, path: new RegExp(`^/v2/auth/providers/${ID}$`), apply: forgetOne('oauthProviders') },
  { method: /^GET$/, path: /^\/v1\/integrations\/forge\/codehost\/install$/, apply: keepEach('codehostIntegrations') },
  {
    method: /^GET$/,
    path: new RegExp(`^/v1/integrations/forge/codehost/${ID}/repos$`),
    apply: (state, { parts, body, tenantId }) =>
      void state.codehostRepos.set(
        parts.id!,
        itemsOf(body).map((item) => answered(item, tenantId)),
      ),
  },
  { method: /^GET$/, path: /^\/api\/v1\/bulk-exports\/destinations$/, apply: keepEach('destinations') },
  { method: /^POST$/, path: /^\/api\/v1\/bulk-exports\/destinations$/, apply: keepOne('destinations') },
  {
    method: /^(GET|PATCH)$/,
    path: new RegExp(`^/api/v1/bulk-exports/destinations/${ID}$`),
    apply: keepOne('destinations'),
  },
  {
    method: /^DELETE$/,
    path: new RegExp(`^/api/v1/bulk-exports/destinations/${ID}$`),
    apply: forgetOne('destinations'),
  },
  { method: /^GET$/, path: /^\/api\/v1\/bulk-exports$/, apply: keepEach('exports') },
  { method: /^POST$/, path: /^\/api\/v1\/bulk-exports$/, apply: keepOne('exports') },
  {
    method: /^GET$/,
    path: /^\/api\/v1\/bulk-exports\/(runs$|[^/]+\/runs)/,
    apply: (state) => void state.exportRunAnswers++,
  },
  { method: /^(GET|PATCH)$/, path: new RegExp(`^/api/v1/bulk-exports/${ID}$`), apply: keepOne('exports') },
];

/** The path of the API a recorded URL names, without a base URL's prefix and a trailing '/'; null for other URLs. */
function apiPath(url: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  const root = API_ROOTS.exec(pathname);
  return root === null ? null : pathname.slice(root.index).replace(/\/$/, '');
}

/** Reads the latest state of each resource from a recording's successful answers, in order. */
export function recordedState(log: HarLog): RecordedState {
  const state: RecordedState = {
    deployments: new Map(),
    revisions: new Map(),
    oauthProviders: new Map(),
    listeners: new Map(),
    codehostIntegrations: new Map(),
    codehostRepos: new Map(),
    destinations: new Map(),
    exports: new Map(),
    exportRunAnswers: 0,
    tenantIds: [],
    removed: new Set(),
  };
  const tenants = new Set<string>();
  for (const { request, response } of log.entries) {
    const path = apiPath(request.url);
    const requestTenant = headerValue(request.headers, 'x-tenant-id');
    if (path === null || response.status < 200 || response.status > 299) continue;
    const method = request.method.toUpperCase();
    const route = ROUTES.find((candidate) => candidate.method.test(method) && candidate.path.test(path));
    if (!route) continue;
    const body = bodyJson(response.content);
    route.apply(state, { parts: route.path.exec(path)!.groups ?? {}, body, tenantId: requestTenant });
    const answerTenant =
      isObject(body) && typeof body.tenant_id === 'string'
        ? body.tenant_id
        : itemsOf(body).find((item) => typeof item.tenant_id === 'string')?.tenant_id;
    for (const tenant of [requestTenant, answerTenant])
      if (typeof tenant === 'string' && tenant !== '') tenants.add(tenant);
  }
  state.tenantIds = [...tenants];
  return state;
}
