/** One item of a 422's detail list: where the refused value was (`['body', 'match', 'path']`) and why. */
export interface ApiIssue {
  loc: (string | number)[];
  msg: string;
}

/**
 * An answer of the API that is not a success, with its `detail` as text (a 422's list joined) and, for a 422, the list
 * itself, for a form to show each item at its field.
 */
export class DashboardApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly issues: readonly ApiIssue[] = [],
  ) {
    super(detail);
  }
}

/** A 422's detail items that have a location and words; none for any other detail. */
function issuesOf(detail: unknown): ApiIssue[] {
  if (!Array.isArray(detail)) return [];
  return detail.flatMap((issue: { loc?: unknown; msg?: unknown }) =>
    Array.isArray(issue?.loc) && typeof issue.msg === 'string'
      ? [{ loc: issue.loc as (string | number)[], msg: issue.msg }]
      : [],
  );
}

/** A 422 detail list as one line: "body.seconds: Input should be a valid number; ...". */
function detailText(detail: unknown, fallback: string): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown[]; msg?: string }) =>
        [Array.isArray(issue.loc) ? issue.loc.join('.') : '', issue.msg ?? ''].filter(Boolean).join(': '),
      )
      .join('; ');
  }
  return fallback;
}

export interface DashboardRequest {
  /** A JSON body. */
  body?: unknown;
  /** A body sent as it is (an uploaded file), with its type as the content type (else application/octet-stream). */
  file?: Blob;
  /** Calls the public API as this workspace (with its API key). */
  workspaceId?: string;
  headers?: Record<string, string>;
}

interface WorkspaceKey {
  id: string;
  api_key: string;
}

/**
 * How the dashboard reads and changes state: through the documented API alone, called in
 * process. `send` is the app's fetch with the in-process mark, so the calls are neither
 * journaled nor faulted.
 */
export class DashboardApi {
  private apiKeys: Promise<Map<string, string>> | undefined;

  constructor(private readonly send: (request: Request) => Promise<Response>) {}

  /** The response as it is, whatever its status. */
  async raw(
    method: string,
    path: string,
    { body, file, workspaceId, headers = {} }: DashboardRequest = {},
  ): Promise<Response> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    if (file !== undefined) {
      init.body = file;
      (init.headers as Record<string, string>)['content-type'] = file.type || 'application/octet-stream';
    }
    if (workspaceId !== undefined)
      (init.headers as Record<string, string>)['x-api-key'] = await this.apiKeyOf(workspaceId);
    return this.send(new Request(new URL(path, 'http://localhost'), init));
  }

  /** The JSON answer of a success (null for 204); any other status throws DashboardApiError with the API's detail. */
  async json<T>(method: string, path: string, request?: DashboardRequest): Promise<T> {
    const response = await this.raw(method, path, request);
    if (response.status === 204) return null as T;
    const text = await response.text();
    const parsed: unknown = text === '' ? null : JSON.parse(text);
    if (!response.ok) {
      const detail = (parsed as { detail?: unknown } | null)?.detail;
      throw new DashboardApiError(
        response.status,
        detailText(detail, `${method} ${path} answered ${response.status}`),
        issuesOf(detail),
      );
    }
    return parsed as T;
  }

  get<T>(path: string, request?: DashboardRequest): Promise<T> {
    return this.json<T>('GET', path, request);
  }

  /** The fixtures' keys (the state dump masks them), read once: a reset keeps them. */
  private async apiKeyOf(workspaceId: string): Promise<string> {
    this.apiKeys ??= this.get<{ workspaces: WorkspaceKey[] }>('/_localplane/fixtures').then(
      ({ workspaces }) => new Map(workspaces.map((workspace) => [workspace.id, workspace.api_key])),
    );
    const apiKey = (await this.apiKeys).get(workspaceId);
    if (apiKey === undefined) throw new DashboardApiError(404, `Workspace ${workspaceId} not found`);
    return apiKey;
  }
}
