import { afterAll, beforeAll, expect } from 'vitest';
import { start, type Localplane, type StartOptions } from '../../src/index.ts';
import { OBJSTORE_PERMISSIONS } from '../../src/objstore/index.ts';
import { checkServedResponse } from './openapi.ts';
import type { UntypedJson } from './untyped-json.ts';

export interface FixtureWorkspace {
  id: string;
  name: string;
  tier: string;
  api_key: string;
  sessions: {
    id: string;
    name: string;
    run_count: number;
    first_run_start_time: string;
    last_run_start_time: string;
  }[];
  self_hosted: boolean;
  integrations: { id: string; repos: { id: number; url: string; default_branch: string }[] }[];
  listeners: string[];
  deployments: { id: string; name: string; source: string }[];
}

export interface FixtureKey {
  access_key_id: string;
  secret_access_key: string;
  permissions: string[];
}

export interface FixturesView {
  workspaces: FixtureWorkspace[];
  unknown_api_key: string;
  objstore: {
    endpoint_url: string;
    buckets: string[];
    public_buckets: string[];
    keys: FixtureKey[];
    files_dir: string;
    endpoint_aliases: string[];
  };
}

export interface ApiResponse<T = UntypedJson> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = UntypedJson>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    // The served OpenAPI document describes every response the suite sees (redirects followed).
    await checkServedResponse(
      response.url,
      method,
      response.status,
      response.headers.get('content-type') ?? '',
      text,
      response.headers.get('x-localplane-fault-rule'),
    );
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  /** A client authenticated as one workspace. */
  as(workspace: { id: string; api_key: string }): WorkspaceApi {
    return new WorkspaceApi(this.baseUrl, { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id });
  }
}

export class WorkspaceApi extends Api {
  constructor(
    baseUrl: string,
    private readonly auth: Record<string, string>,
  ) {
    super(baseUrl);
  }

  override request<T = UntypedJson>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
  ) {
    return super.request<T>(method, path, { ...options, headers: { ...this.auth, ...options.headers } });
  }

  get = <T = UntypedJson>(path: string) => this.request<T>('GET', path);
  post = <T = UntypedJson>(path: string, body?: unknown) => this.request<T>('POST', path, { body });
  patch = <T = UntypedJson>(path: string, body?: unknown) => this.request<T>('PATCH', path, { body });
  delete = <T = UntypedJson>(path: string) => this.request<T>('DELETE', path);
}

export interface TestContext {
  instance: Localplane;
  api: Api;
  admin: Api;
  fixtures: FixturesView;
  /** Server log lines, to check that no secret was ever logged. */
  logs: string[];
}

/** Starts one localplane for the calling test file (ports 0, its own temp dir) and stops it afterwards. */
export function useLocalplane(options: StartOptions = {}): TestContext {
  const context = { logs: [] as string[] } as TestContext;
  beforeAll(async () => {
    context.instance = await start({ port: 0, objstorePort: 0, log: (line) => context.logs.push(line), ...options });
    context.api = new Api(context.instance.apiUrl);
    context.admin = new Api(`${context.instance.apiUrl}/_localplane`);
    context.fixtures = (await context.admin.request<FixturesView>('GET', '/fixtures')).body;
  });
  afterAll(async () => {
    if (!context.instance) return;
    // A lost wake-up anywhere in the file's work shows here: the watchdog had to start or free something.
    const headers: Record<string, string> =
      options.adminToken === undefined ? {} : { authorization: `Bearer ${options.adminToken}` };
    // In process: a socket kept alive from before a long in-process loop may be closed by the server under the request.
    const health = await context.instance.request('/_localplane/health', { headers });
    const watchdog = ((await health.json()) as { watchdog: unknown }).watchdog;
    await context.instance.stop();
    expect(watchdog, context.logs.filter((line) => line.includes('watchdog:')).join('\n')).toEqual({
      late_starts: 0,
      overruns: 0,
    });
  });
  return context;
}

export function workspaceByTier(fixtures: FixturesView, tier: string): FixtureWorkspace {
  const workspace = fixtures.workspaces.find((candidate) => candidate.tier === tier);
  if (!workspace) throw new Error(`no fixture workspace on tier ${tier}`);
  return workspace;
}

export function keyWith(fixtures: FixturesView, test: (permissions: string[]) => boolean): FixtureKey {
  const key = fixtures.objstore.keys.find((candidate) => test(candidate.permissions));
  if (!key) throw new Error('no fixture key with those permissions');
  return key;
}

export const fullKey = (fixtures: FixturesView) =>
  keyWith(fixtures, (p) => OBJSTORE_PERMISSIONS.every((permission) => p.includes(permission)));
export const createOnlyKey = (fixtures: FixturesView) =>
  keyWith(fixtures, (p) => p.includes('create') && !p.includes('delete'));
export const noCreateKey = (fixtures: FixturesView) => keyWith(fixtures, (p) => !p.includes('create'));

export function credentialsOf(key: FixtureKey) {
  return { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key };
}

/** Polls until the check returns a value; for work that runs on real I/O, not on the emulator clock. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
