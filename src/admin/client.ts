/**
 * The admin API as methods: each one request to a route under /_localplane, taking and
 * answering what that route takes and answers (the JSON bodies, their field names as sent). An
 * instance gets them over its app in process; `connect(url)` over HTTP, for tests in another
 * process than the instance (a test runner's global setup).
 */
import type { ExportRunFaultInput, ValidationFaultInput } from '../bulk-exports/faults.ts';
import type { Limits, LimitsPatch } from '../config.ts';
import type { RevisionFaultInput } from '../deployments/faults.ts';
import type {
  DeploymentResponse,
  DeploymentStatus,
  RevisionHistory,
  RevisionResponse,
  RevisionStatus,
} from '../deployments/schemas.ts';
import type { FaultRuleInput, FaultRuleView } from '../journal/fault-rules.ts';
import type { JournalFilterInput } from '../journal/filter.ts';
import type { NearMissesOptions, RequestStatsOptions } from '../journal/programmatic.ts';
import type { JournalEntry, NearMisses, RequestStats } from '../journal/schemas.ts';
import type { BucketView, ObjectsPage, ObjectsQuery, ObjectView } from '../objstore/browser-routes.ts';
import type { ObjstoreKeyInput, ObjstoreKeyView } from '../objstore/key-routes.ts';
import { queryText, type QueryInput } from '../shared/query-text.ts';
import type { SavedSnapshot } from '../snapshots/folder.ts';
import type { Restored, SavedSnapshots } from '../snapshots/routes.ts';
import type { RunsAddition, RunsAdded } from '../tracing/knob-routes.ts';
import type { PreviewResponse, SqlRequest, SqlResponse, previewQuery } from '../warehouse/schemas.ts';
import type { Tier } from '../workspaces/store.ts';
import type { ResetScope } from './module.ts';
import type {
  ClockRun,
  ClockState,
  FaultsState,
  FixturesView,
  Health,
  ListedTask,
  State,
  TierChange,
} from './schemas.ts';
import type { StateQuery } from './state.ts';

export type PreviewOptions = QueryInput<typeof previewQuery>;
export type ObjectsOptions = { [K in keyof ObjectsQuery]?: ObjectsQuery[K] | number };

/** An answer of the admin API other than a success: its status and its `detail` (a string, or a 422's list). */
export class LocalplaneError extends Error {
  override name = 'LocalplaneError';
  constructor(
    readonly status: number,
    readonly detail: unknown,
    request: string,
  ) {
    super(`${request} answered ${status}: ${describeDetail(detail)}`);
  }
}

function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail))
    return detail
      .map((item: { loc?: unknown[]; msg?: string }) => `${(item.loc ?? []).join('.')}: ${item.msg}`)
      .join('; ');
  return JSON.stringify(detail);
}

/** The admin actions both an instance and a `connect()`ed client have, each named after its route. */
export interface AdminMethods {
  /** GET /health */
  health(): Promise<Health>;
  /** GET /fixtures (binds an in-process instance's objstore, whose endpoint it hands out) */
  fixtures(): Promise<FixturesView>;
  /**
   * GET /tasks: the task in flight of each lane (`state: 'running'`), longest running first, then the queued ones,
   * soonest first
   */
  tasks(): Promise<ListedTask[]>;
  /** GET and PATCH /config: the limits in force, changed until a reset */
  config: { get(): Promise<Limits>; patch(changes: LimitsPatch): Promise<Limits> };
  /** /faults: the knobs that make the next destination validations, export runs or revisions fail */
  faults: {
    list(): Promise<FaultsState>;
    clear(): Promise<FaultsState>;
    destinationValidations(fault: ValidationFaultInput): Promise<FaultsState>;
    exportRuns(fault: ExportRunFaultInput): Promise<FaultsState>;
    revisions(fault: RevisionFaultInput): Promise<FaultsState>;
  };
  /** PUT /workspaces/{workspace_id}/tier */
  workspaces: { setTier(workspaceId: string, change: { tier: Tier }): Promise<TierChange> };
  /** POST /sessions/{session_id}/runs: generated runs added to a tracing project */
  sessions: { addRuns(sessionId: string, runs?: RunsAddition): Promise<RunsAdded> };
  deployments: {
    /** PUT /deployments/{deployment_id}/status */
    setStatus(deploymentId: string, change: { status: DeploymentStatus }): Promise<DeploymentResponse>;
    /** GET /deployments/{deployment_id}/revisions/{revision_id}/history */
    revisionHistory(deploymentId: string, revisionId: string): Promise<RevisionHistory>;
    /** PUT /deployments/{deployment_id}/revisions/{revision_id}/status */
    setRevisionStatus(
      deploymentId: string,
      revisionId: string,
      change: { status: RevisionStatus },
    ): Promise<RevisionResponse>;
  };
  objstore: {
    /** /objstore/keys: key pairs, never with their secrets */
    keys: {
      list(): Promise<ObjstoreKeyView[]>;
      add(key: ObjstoreKeyInput): Promise<ObjstoreKeyView>;
      remove(accessKeyId: string): Promise<void>;
    };
    /** GET /objstore/buckets */
    buckets(): Promise<{ buckets: BucketView[] }>;
    /** GET /objstore/buckets/{bucket}/objects: a page of keys */
    objects(bucket: string, options?: ObjectsOptions): Promise<ObjectsPage>;
    /** GET /objstore/buckets/{bucket}/object?key= */
    object(bucket: string, key: string): Promise<ObjectView>;
    /** GET /objstore/buckets/{bucket}/object/content?key= */
    content(bucket: string, key: string): Promise<Uint8Array>;
    /** PUT /objstore/buckets/{bucket}/object?key=: stored as S3 PutObject stores it (octet-stream unless given) */
    putObject(
      bucket: string,
      key: string,
      content: Uint8Array,
      options?: { contentType?: string },
    ): Promise<ObjectView>;
    /** DELETE /objstore/buckets/{bucket}/object?key= */
    deleteObject(bucket: string, key: string): Promise<void>;
    /** GET /objstore/preview */
    preview(options: PreviewOptions): Promise<PreviewResponse>;
  };
  /**
   * Snapshot files of the snapshots folder, each named by a plain file name (`snapshot()` and `restore()` of an
   * instance take any path).
   */
  snapshots: {
    /** POST /snapshot */
    save(name: string): Promise<SavedSnapshot>;
    /** POST /restore */
    restore(name: string): Promise<Restored>;
    /** GET /snapshots */
    list(): Promise<SavedSnapshots>;
    /** GET /snapshots/{name} */
    download(name: string): Promise<Uint8Array>;
    /** PUT /snapshots/{name} */
    upload(name: string, file: Uint8Array): Promise<SavedSnapshot>;
    /** DELETE /snapshots/{name} */
    delete(name: string): Promise<void>;
  };
  /** GET /state: every resource, secrets masked */
  state(query?: StateQuery): Promise<State>;
  /** POST /sql: a read-only query over an export's Parquet files */
  sql(request: SqlRequest): Promise<SqlResponse>;
}

/**
 * An instance reached over HTTP (`connect(url)`): the admin methods, with the journal, the fault
 * rules, the clock and reset as an in-process instance has them, but answering promises.
 */
export interface LocalplaneClient extends AdminMethods {
  /** The API's base URL, as an instance from `start()` names it. */
  apiUrl: string;
  /** POST /reset */
  reset(scope?: ResetScope): Promise<void>;
  /** /clock: each change answers the clock after it (and advanceToNext and runUntilIdle the tasks that ran) */
  clock: {
    get(): Promise<ClockState>;
    freeze(): Promise<ClockState>;
    unfreeze(): Promise<ClockState>;
    set(time: string | Date): Promise<ClockState>;
    advance(seconds: number): Promise<ClockState>;
    advanceToNext(): Promise<ClockRun>;
    runUntilIdle(options?: { withinSeconds?: number }): Promise<ClockRun>;
  };
  /** /requests */
  requests: {
    list(filter?: JournalFilterInput): Promise<JournalEntry[]>;
    find(filter: JournalFilterInput): Promise<JournalEntry[]>;
    count(filter?: JournalFilterInput): Promise<number>;
    /** Undefined when the journal no longer holds it. */
    get(id: number): Promise<JournalEntry | undefined>;
    stats(options?: RequestStatsOptions): Promise<RequestStats>;
    clear(): Promise<void>;
  };
  /** /fault-rules */
  faultRules: {
    add(rule: FaultRuleInput): Promise<FaultRuleView>;
    list(): Promise<FaultRuleView[]>;
    /** False when there is no such rule. */
    remove(id: string): Promise<boolean>;
    clear(): Promise<void>;
    nearMisses(options?: NearMissesOptions): Promise<NearMisses>;
  };
}

/** A header match as a query's `Name:value` text. */
const headerMatchText = (header: JournalFilterInput['header']) =>
  typeof header === 'object' ? (header.value === undefined ? header.name : `${header.name}:${header.value}`) : header;

/** A JSON filter as the query of GET /requests/count, which takes the same fields as text. */
function filterQuery({ header, response_header, ...filter }: JournalFilterInput): Record<string, unknown> {
  return { ...filter, header: headerMatchText(header), response_header: headerMatchText(response_header) };
}

/** Sends a request to the instance and gives its answer. */
export type Send = (request: Request) => Promise<Response>;

interface CallOptions {
  query?: Readonly<Record<string, unknown>>;
  /** A JSON body. */
  json?: unknown;
  /** A body sent as application/octet-stream, or as `contentType`. */
  bytes?: Uint8Array;
  contentType?: string;
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request to /_localplane/…: the answer when it succeeded, else a LocalplaneError. */
function caller(send: Send, baseUrl: string, headers: Readonly<Record<string, string>>) {
  return async (
    method: HttpMethod,
    path: string,
    { query, json, bytes, contentType: bytesType }: CallOptions = {},
  ): Promise<Response> => {
    const url = new URL(`/_localplane${path}`, baseUrl);
    for (const [name, value] of Object.entries(queryText(query ?? {}))) url.searchParams.set(name, value);
    const body = json !== undefined ? JSON.stringify(json) : (bytes as Uint8Array<ArrayBuffer> | undefined);
    const contentType =
      json !== undefined
        ? 'application/json'
        : bytes !== undefined
          ? (bytesType ?? 'application/octet-stream')
          : undefined;
    const response = await send(
      new Request(url, {
        method,
        headers: { ...headers, ...(contentType ? { 'content-type': contentType } : {}) },
        body,
      }),
    );
    if (response.ok) return response;
    const text = await response.text();
    let detail: unknown = text;
    try {
      detail = (JSON.parse(text) as { detail?: unknown }).detail ?? text;
    } catch {
      // Not JSON (a proxy's page): the text is the detail.
    }
    throw new LocalplaneError(response.status, detail, `${method} /_localplane${path}`);
  };
}

/** The answer as the route gives it: its JSON, its bytes, or nothing (a 204, or an answer not read). */
function answers(call: ReturnType<typeof caller>) {
  return {
    json: async <T>(method: HttpMethod, path: string, options?: CallOptions) =>
      (await (await call(method, path, options)).json()) as T,
    bytes: async (path: string, query?: Record<string, unknown>) =>
      new Uint8Array(await (await call('GET', path, { query })).arrayBuffer()),
    done: async (method: HttpMethod, path: string, options?: CallOptions) => {
      await (await call(method, path, options)).body?.cancel();
    },
  };
}

type Answers = ReturnType<typeof answers>;

const segment = encodeURIComponent;

function adminMethods({ json, bytes, done }: Answers): AdminMethods {
  const bucketPath = (bucket: string) => `/objstore/buckets/${segment(bucket)}`;
  const revisionPath = (deploymentId: string, revisionId: string) =>
    `/deployments/${segment(deploymentId)}/revisions/${segment(revisionId)}`;
  return {
    health: () => json('GET', '/health'),
    fixtures: () => json('GET', '/fixtures'),
    tasks: () => json('GET', '/tasks'),
    config: { get: () => json('GET', '/config'), patch: (changes) => json('PATCH', '/config', { json: changes }) },
    faults: {
      list: () => json('GET', '/faults'),
      clear: () => json('DELETE', '/faults'),
      destinationValidations: (fault) => json('POST', '/faults/destination-validations', { json: fault }),
      exportRuns: (fault) => json('POST', '/faults/export-runs', { json: fault }),
      revisions: (fault) => json('POST', '/faults/revisions', { json: fault }),
    },
    workspaces: {
      setTier: (workspaceId, change) => json('PUT', `/workspaces/${segment(workspaceId)}/tier`, { json: change }),
    },
    sessions: {
      addRuns: (sessionId, runs = {}) => json('POST', `/sessions/${segment(sessionId)}/runs`, { json: runs }),
    },
    deployments: {
      setStatus: (deploymentId, change) =>
        json('PUT', `/deployments/${segment(deploymentId)}/status`, { json: change }),
      revisionHistory: (deploymentId, revisionId) => json('GET', `${revisionPath(deploymentId, revisionId)}/history`),
      setRevisionStatus: (deploymentId, revisionId, change) =>
        json('PUT', `${revisionPath(deploymentId, revisionId)}/status`, { json: change }),
    },
    objstore: {
      keys: {
        list: () => json('GET', '/objstore/keys'),
        add: (key) => json('POST', '/objstore/keys', { json: key }),
        remove: (accessKeyId) => done('DELETE', `/objstore/keys/${segment(accessKeyId)}`),
      },
      buckets: () => json('GET', '/objstore/buckets'),
      objects: (bucket, options = {}) => json('GET', `${bucketPath(bucket)}/objects`, { query: options }),
      object: (bucket, key) => json('GET', `${bucketPath(bucket)}/object`, { query: { key } }),
      content: (bucket, key) => bytes(`${bucketPath(bucket)}/object/content`, { key }),
      putObject: (bucket, key, content, { contentType } = {}) =>
        json('PUT', `${bucketPath(bucket)}/object`, { query: { key }, bytes: content, contentType }),
      deleteObject: (bucket, key) => done('DELETE', `${bucketPath(bucket)}/object`, { query: { key } }),
      preview: (options) => json('GET', '/objstore/preview', { query: options }),
    },
    snapshots: {
      save: (name) => json('POST', '/snapshot', { json: { name } }),
      restore: (name) => json('POST', '/restore', { json: { name } }),
      list: () => json('GET', '/snapshots'),
      download: (name) => bytes(`/snapshots/${segment(name)}`),
      upload: (name, file) => json('PUT', `/snapshots/${segment(name)}`, { bytes: file }),
      delete: (name) => done('DELETE', `/snapshots/${segment(name)}`),
    },
    state: (query = {}) => json('GET', '/state', { query }),
    sql: (request) => json('POST', '/sql', { json: request }),
  };
}

/** The admin methods of an instance, each a request to its own app. */
export function inProcessAdminMethods(send: Send): AdminMethods {
  return adminMethods(answers(caller(send, 'http://localhost', {})));
}

export interface ConnectOptions {
  /** The token the instance was started with (adminToken, --admin-token), if any. */
  adminToken?: string;
}

/** A client of a running instance's admin API, by its base URL (`lp.apiUrl`, the CLI's ready line). */
export function connect(url: string, options: ConnectOptions = {}): LocalplaneClient {
  const http = answers(
    caller(
      (request) => fetch(request),
      url,
      options.adminToken === undefined ? {} : { authorization: `Bearer ${options.adminToken}` },
    ),
  );
  const { json, done } = http;
  const notFoundAs = async <T>(answer: Promise<T>, absent: T): Promise<T> =>
    answer.catch((error: unknown) => {
      if (error instanceof LocalplaneError && error.status === 404) return absent;
      throw error;
    });
  const entries = async (method: HttpMethod, filter: JournalFilterInput) =>
    (
      await json<{ requests: JournalEntry[] }>(
        method,
        method === 'GET' ? '/requests' : '/requests/find',
        method === 'GET' ? { query: filterQuery(filter) } : { json: filter },
      )
    ).requests;
  return {
    apiUrl: url,
    ...adminMethods(http),
    reset: (scope = {}) =>
      done('POST', '/reset', { json: { workspace_id: scope.workspaceId, keep_clock: scope.keepClock } }),
    clock: {
      get: () => json('GET', '/clock'),
      freeze: () => json('POST', '/clock/freeze'),
      unfreeze: () => json('POST', '/clock/unfreeze'),
      set: (time) => json('POST', '/clock/set', { json: { time: time instanceof Date ? time.toISOString() : time } }),
      advance: (seconds) => json('POST', '/clock/advance', { json: { seconds } }),
      advanceToNext: () => json('POST', '/clock/advance-to-next'),
      runUntilIdle: ({ withinSeconds } = {}) =>
        json('POST', '/clock/run-until-idle', { json: { within_seconds: withinSeconds } }),
    },
    requests: {
      list: (filter = {}) => entries('GET', filter),
      find: (filter) => entries('POST', filter),
      count: async (filter = {}) =>
        (await json<{ count: number }>('GET', '/requests/count', { query: filterQuery(filter) })).count,
      get: (id) => notFoundAs(json<JournalEntry | undefined>('GET', `/requests/${id}`), undefined),
      stats: (options = {}) => json('GET', '/requests/stats', { query: options }),
      clear: () => done('DELETE', '/requests'),
    },
    faultRules: {
      add: (rule) => json('POST', '/fault-rules', { json: rule }),
      list: async () => (await json<{ rules: FaultRuleView[] }>('GET', '/fault-rules')).rules,
      remove: (id) =>
        notFoundAs(
          done('DELETE', `/fault-rules/${segment(id)}`).then(() => true),
          false,
        ),
      clear: () => done('DELETE', '/fault-rules'),
      nearMisses: (options = {}) => json('GET', '/fault-rules/near-misses', { query: options }),
    },
  };
}
