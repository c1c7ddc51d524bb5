import { expect } from 'vitest';
import type { Compression, FormatVersion } from '../../src/bulk-exports/schemas.ts';
import { credentialsOf, eventually, fullKey, type FixtureWorkspace, type TestContext } from './instance.ts';
import { parquetUpload, type ObjstoreProxy } from './objstore-proxy.ts';

export interface ExportRun {
  id: string;
  status: string;
  retry_number: number;
  errors: Record<string, string> | null;
  started_at?: string;
  metadata: { result: { rows_written: number; exported_files: string[] } };
}

/** The window of an export, and its format where a test needs another. */
export interface ExportRequest {
  start_time: string;
  end_time?: string;
  interval_hours?: number;
  format_version?: FormatVersion;
  compression?: Compression;
}

/** Bulk-export calls as one workspace, against the test file's instance. */
export function exportClient(ctx: TestContext, workspace: () => FixtureWorkspace) {
  const client = () => ctx.api.as(workspace());
  const session = (name: string) => workspace().sessions.find((candidate) => candidate.name === name)!.id;

  async function createDestination(
    prefix: string,
    options: { endpointUrl?: string; credentials?: { access_key_id: string; secret_access_key: string } } = {},
  ) {
    const response = await client().post('/api/v1/bulk-exports/destinations', {
      display_name: prefix,
      config: {
        bucket_name: ctx.fixtures.objstore.buckets[0],
        prefix,
        endpoint_url: options.endpointUrl ?? ctx.fixtures.objstore.endpoint_url,
      },
      credentials: options.credentials ?? credentialsOf(fullKey(ctx.fixtures)),
    });
    expect(response.status, response.text).toBe(200);
    return response.body.id as string;
  }

  /** Exports as v2_beta with snappy unless `request` says otherwise. */
  const createExport = (destinationId: string, sessionName: string, request: ExportRequest) =>
    client().post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destinationId,
      session_id: session(sessionName),
      format_version: 'v2_beta',
      compression: 'snappy',
      ...request,
    });

  async function startExport(destinationId: string, sessionName: string, request: ExportRequest) {
    const response = await createExport(destinationId, sessionName, request);
    expect(response.status, response.text).toBe(200);
    return response.body.id as string;
  }

  return {
    client,
    createDestination,
    createExport,
    startExport,
    getExport: async (id: string) => (await client().get(`/api/v1/bulk-exports/${id}`)).body,
    getRuns: async (id: string) => (await client().get(`/api/v1/bulk-exports/${id}/runs`)).body as ExportRun[],
    listExports: async () =>
      (await client().get('/api/v1/bulk-exports?limit=100')).body as { id: string; status: string }[],
  };
}

/** A task as GET /_localplane/tasks lists it; the fields of its kind untyped. */
export interface ListedTask {
  state: 'running' | 'queued';
  started_at?: string;
  due_at: string;
  label: string;
  [field: string]: unknown;
}

/** Harness knobs of the test file's instance. */
export function harness(ctx: TestContext) {
  const admin = (method: string, path: string, body?: unknown) =>
    ctx.admin.request(method, path, body === undefined ? {} : { body });
  return {
    admin,
    advance: (seconds: number) => admin('POST', '/clock/advance', { seconds }),
    tasks: async () => (await admin('GET', '/tasks')).body as ListedTask[],
    /** A key pair of the test's own, so it can revoke or change it without touching the fixtures. */
    async addKey(accessKeyId: string, secretAccessKey: string, permissions = ['create', 'delete', 'get', 'multipart']) {
      const response = await admin('POST', '/objstore/keys', {
        access_key_id: accessKeyId,
        secret_access_key: secretAccessKey,
        permissions,
      });
      expect(response.status, response.text).toBe(201);
      return { access_key_id: accessKeyId, secret_access_key: secretAccessKey };
    },
  };
}

export const statuses = (items: { status: string }[]) => items.map((item) => item.status);

const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };

/**
 * Starts an export of a day whose run's next step stays in flight (GET /tasks lists it
 * running) with the clock frozen: `proxy` holds the first file's upload, and the next step,
 * due at once, waits for it. Answers the export's id and the advance that ran the steps, which
 * ends once `proxy.release()` lets the upload through.
 */
export async function exportWithStepInFlight(
  ctx: TestContext,
  workspace: () => FixtureWorkspace,
  proxy: ObjstoreProxy,
  prefix: string,
) {
  const exports = exportClient(ctx, workspace);
  const { advance, tasks } = harness(ctx);
  const destinationId = await exports.createDestination(prefix, { endpointUrl: proxy.url });
  const exportId = await exports.startExport(destinationId, 'support-bot-staging', ONE_DAY);
  proxy.arm({ kind: 'hold' }, parquetUpload);
  const advancing = advance(0);
  // The first step is in flight for a moment too, while it encodes the file.
  const nextStepRuns = async () =>
    (await tasks()).some(
      (task) => task.state === 'running' && task.bulk_export_id === exportId && task.step === 'next_file',
    );
  await eventually(nextStepRuns, 'the next step in flight');
  return { exportId, advancing };
}
