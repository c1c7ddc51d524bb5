import { expect } from 'vitest';
import type { Compression, FormatVersion } from '../../src/bulk-exports/schemas.ts';
import { credentialsOf, fullKey, type FixtureWorkspace, type TestContext } from './instance.ts';

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

  async function createDestination(prefix: string, options: { endpointUrl?: string; credentials?: { access_key_id: string; secret_access_key: string } } = {}) {
    const response = await client().post('/api/v1/bulk-exports/destinations', {
      display_name: prefix,
      config: { bucket_name: ctx.fixtures.objstore.buckets[0], prefix, endpoint_url: options.endpointUrl ?? ctx.fixtures.objstore.endpoint_url },
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
    listExports: async () => (await client().get('/api/v1/bulk-exports?limit=100')).body as { id: string; status: string }[],
  };
}

/** Harness knobs of the test file's instance. */
export function harness(ctx: TestContext) {
  const admin = (method: string, path: string, body?: unknown) => ctx.admin.request(method, path, body === undefined ? {} : { body });
  return {
    admin,
    advance: (seconds: number) => admin('POST', '/clock/advance', { seconds }),
    tasks: async () => (await admin('GET', '/tasks')).body as { due_at: string; label: string }[],
    /** A key pair of the test's own, so it can revoke or change it without touching the fixtures. */
    async addKey(accessKeyId: string, secretAccessKey: string, permissions = ['create', 'delete', 'get', 'multipart']) {
      const response = await admin('POST', '/objstore/keys', { access_key_id: accessKeyId, secret_access_key: secretAccessKey, permissions });
      expect(response.status, response.text).toBe(201);
      return { access_key_id: accessKeyId, secret_access_key: secretAccessKey };
    },
  };
}

export const statuses = (items: { status: string }[]) => items.map((item) => item.status);
