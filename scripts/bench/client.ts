/** The API calls the row groups make to set up what they measure. */

import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

/** The first page of deployments: the request of the cold start and of the first API row. */
export const DEPLOYMENTS_PAGE = '/v2/deployments?limit=20';
/** A workspace key of the shipped fixtures; Prism only checks that the header is there. */
export const SEEDED_API_KEY = 'lp_test_acme_plus_0001';
/** The shipped objstore fixtures' full-access key, and the bucket exports go to. */
export const FULL_ACCESS_KEY = {
  accessKeyId: 'LPTESTFULLACCESS0001',
  secretAccessKey: 'lp-test-secret-full-access-0001',
};
export const EXPORT_BUCKET = 'exports';

/** A JSON call that must succeed; `T` is the shape the caller expects of the answer (not checked). */
export async function callApi<T>(
  apiUrl: string,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json as T;
}

export interface ExportRequest {
  apiUrl: string;
  apiKey: string;
  /** The objstore endpoint the destination points at; the emulator's own when absent. */
  endpointUrl?: string;
  sessionId: string;
  start: string;
  end: string;
  compression: string;
}

/**
 * Creates a destination in EXPORT_BUCKET (FULL_ACCESS_KEY) and a one-time v2_beta export to it; returns the export's
 * id.
 */
export async function createExport(request: ExportRequest): Promise<string> {
  const { apiUrl, apiKey } = request;
  const destination = await callApi<{ id: string }>(apiUrl, apiKey, 'POST', '/api/v1/bulk-exports/destinations', {
    display_name: 'bench',
    config: {
      bucket_name: EXPORT_BUCKET,
      prefix: 'bench',
      ...(request.endpointUrl ? { endpoint_url: request.endpointUrl } : {}),
    },
    credentials: { access_key_id: FULL_ACCESS_KEY.accessKeyId, secret_access_key: FULL_ACCESS_KEY.secretAccessKey },
  });
  const created = await callApi<{ id: string }>(apiUrl, apiKey, 'POST', '/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.id,
    session_id: request.sessionId,
    start_time: request.start,
    end_time: request.end,
    format_version: 'v2_beta',
    compression: request.compression,
  });
  return created.id;
}

/**
 * A GET that is sent again when the server closed the kept-alive connection as it went out:
 * a server whose event loop was blocked past its keep-alive timeout closes idle connections
 * before it reads what arrived on them meanwhile.
 */
async function getWithRetry<T>(apiUrl: string, apiKey: string, path: string, onReset: () => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await callApi<T>(apiUrl, apiKey, 'GET', path);
    } catch (error) {
      const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
      if (code !== 'ECONNRESET' || attempt === 3) throw error;
      onReset();
    }
  }
}

/**
 * Polls the export's status one request at a time, `intervalMs` apart, until it has finished;
 * returns its final status, the latency of every poll (the API's latency while it ran; a
 * poll sent again after a connection reset counts from its first try) and how many were reset.
 */
export async function waitForExport(
  apiUrl: string,
  apiKey: string,
  exportId: string,
  intervalMs: number,
  timeoutMs = 600_000,
) {
  const latencies: number[] = [];
  let connectionResets = 0;
  const giveUpAt = performance.now() + timeoutMs;
  for (;;) {
    const asked = performance.now();
    const { status } = await getWithRetry<{ status: string }>(
      apiUrl,
      apiKey,
      `/api/v1/bulk-exports/${exportId}`,
      () => connectionResets++,
    );
    latencies.push(performance.now() - asked);
    if (isTerminalStatus(status))
      return { status: status as string, finishedAt: performance.now(), latencies, connectionResets };
    if (performance.now() > giveUpAt) throw new Error(`export ${exportId} still ${status} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
