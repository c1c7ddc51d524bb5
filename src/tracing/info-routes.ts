import { z } from 'zod';
import { OpenApiHono } from '../openapi/routes.ts';

/**
 * GET /info as the hosted service answers it: the hosted service's SDK clients call it when
 * they start (the Python client logs a warning when it fails) and size their run batches by it.
 * The reference document does not have it; the shape is that of the hosted service's own
 * OpenAPI document as its SDKs' generated clients carry it, with the fields the hosted
 * (cloud) service sends.
 */
const serverInfoSchema = z.object({
  /** Compared by the SDKs with the oldest backend version each of their features needs. */
  version: z.string(),
  /** null on the hosted service: only a self-hosted install has a license. */
  license_expiration_time: z.iso.datetime({ offset: true }).nullable(),
  batch_ingest_config: z.object({
    use_multipart_endpoint: z.boolean(),
    scale_up_qsize_trigger: z.int(),
    scale_up_nthreads_limit: z.int(),
    scale_down_nempty_trigger: z.int(),
    size_limit: z.int(),
    size_limit_bytes: z.int(),
  }),
  instance_flags: z.record(z.string(), z.unknown()),
});

/**
 * A backend version no SDK check finds too old: the Python SDK warns that the backend is older
 * than it needs below 0.16.0 on its newer resources and below 0.16.14 on annotation queues'.
 * localplane's own version (0.1.0) would read as a backend from years ago.
 */
const EMULATED_SERVICE_VERSION = '0.16.14';

const SERVER_INFO: z.infer<typeof serverInfoSchema> = {
  version: EMULATED_SERVICE_VERSION,
  license_expiration_time: null,
  // The hosted service's values; the Python client's tracing thread reads the four scale and size ones by index.
  batch_ingest_config: {
    use_multipart_endpoint: true,
    scale_up_qsize_trigger: 1000,
    scale_up_nthreads_limit: 16,
    scale_down_nempty_trigger: 4,
    size_limit: 100,
    size_limit_bytes: 20_971_520,
  },
  // The flags the SDKs read, as the hosted service sets them; without zstd_compression_enabled the Python client warns
  // that run compression is off.
  instance_flags: {
    zstd_compression_enabled: true,
    dataset_examples_multipart_enabled: true,
    examples_multipart_enabled: true,
  },
};

/**
 * GET /info, and /api/v1/info where the SDKs' generated clients ask for it: the same fixed
 * answer, with no API key needed (the hosted service's is unauthenticated, and a key sent is not read).
 */
export function serverInfoRoutes() {
  const app = new OpenApiHono('info');
  for (const path of ['/info', '/api/v1/info']) {
    app.openapi(
      {
        method: 'get',
        path,
        summary:
          "The service's version, run batching limits and feature flags, as the hosted service's SDK clients read " +
          'them when they start',
        response: { status: 200, description: 'The service information', schema: serverInfoSchema },
      },
      (c) => c.json(SERVER_INFO),
    );
  }
  return app;
}
