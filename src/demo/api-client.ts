import type { FixturesView } from '../admin/schemas.ts';
import type { ExportStatus } from '../bulk-exports/statuses.ts';

export interface ExportView {
  id: string;
  tenant_id: string;
  status: ExportStatus;
  created_at: string;
  bulk_export_destination_id: string;
}

export interface ExportRunView {
  status: string;
  metadata: { result: { rows_written: number } | null };
}

export interface StateView {
  workspaces: {
    destinations: { id: string; config: { bucket_name: string; prefix: string } }[];
    bulk_exports: (ExportView & { runs: ExportRunView[] })[];
  }[];
}

/** The instance answered with an error, could not be reached, or lacks what the demo needs: one line, never a stack. */
export class InstanceError extends Error {}

/** One of the instance's fixture key pairs (public test values), by its id. */
export function fixtureKey(fixtures: FixturesView, accessKeyId: string): FixturesView['objstore']['keys'][number] {
  const key = fixtures.objstore.keys.find((candidate) => candidate.access_key_id === accessKeyId);
  if (!key)
    throw new InstanceError(`the instance has no objstore key ${accessKeyId}: the demo needs the shipped fixtures`);
  return key;
}

/** JSON calls to a localplane instance's API, as a workspace (its X-API-Key) or to the admin API. */
export class InstanceClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
    /** The token of an instance started with --admin-token, sent to its admin API. */
    private readonly adminToken = process.env.LOCALPLANE_ADMIN_TOKEN,
  ) {}

  as(apiKey: string): InstanceClient {
    return new InstanceClient(this.baseUrl, apiKey, this.adminToken);
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers['X-API-Key'] = this.apiKey;
    if (this.adminToken && path.startsWith('/_localplane/')) headers.Authorization = `Bearer ${this.adminToken}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new InstanceError(
        `cannot reach localplane at ${this.baseUrl} ` +
          `(${(error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message})`,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      const detail = (() => {
        try {
          return JSON.stringify((JSON.parse(text) as { detail?: unknown }).detail);
        } catch {
          return text.slice(0, 200);
        }
      })();
      throw new InstanceError(`${method} ${path} answered ${response.status}: ${detail}`);
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}
