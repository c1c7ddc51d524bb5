import type { InProcessLocalplane } from '../../src/index.ts';
import type { FixturesView, FixtureWorkspace } from './instance.ts';
import type { UntypedJson } from './untyped-json.ts';

export interface Reply<T = UntypedJson> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/**
 * JSON calls to an in-process instance through `lp.request()`, optionally as one workspace; `raw` sends bytes as they
 * are instead of a JSON body.
 */
export function inProcessApi(lp: InProcessLocalplane, workspace?: Pick<FixtureWorkspace, 'id' | 'api_key'>) {
  const auth: Record<string, string> = workspace ? { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id } : {};
  async function call<T = UntypedJson>(
    method: string,
    path: string,
    body?: unknown,
    options: { headers?: Record<string, string>; raw?: Uint8Array } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...auth, ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await lp.request(path, {
      method,
      headers,
      body: body === undefined ? (options.raw as BodyInit | undefined) : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : undefined) as T,
      text,
      headers: response.headers,
    };
  }
  return {
    call,
    get: <T = UntypedJson>(path: string) => call<T>('GET', path),
    post: <T = UntypedJson>(path: string, body?: unknown) => call<T>('POST', path, body),
    patch: <T = UntypedJson>(path: string, body?: unknown) => call<T>('PATCH', path, body),
    delete: <T = UntypedJson>(path: string) => call<T>('DELETE', path),
  };
}

/** The fixtures view of an in-process instance (asking for it binds the objstore: it hands out the endpoint). */
export async function fixturesOf(lp: InProcessLocalplane): Promise<FixturesView> {
  return (await inProcessApi(lp).get<FixturesView>('/_localplane/fixtures')).body;
}
