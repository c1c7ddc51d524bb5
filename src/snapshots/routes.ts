import { z } from 'zod';
import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import { SnapshotFileError } from './format.ts';

export interface SnapshotRouteDeps {
  save(path: string): { path: string; bytes: number };
  restore(path: string): Promise<void>;
}

const snapshotSchema = z.object({ path: z.string(), bytes: z.int() });
const restoredSchema = z.object({ status: z.literal('restored'), path: z.string() });

/** A file on the machine localplane runs on; a relative path is taken from localplane's working directory. */
const snapshotRequest = z.strictObject({ path: z.string().min(1).max(4096) });

/** A snapshot file problem as the caller's error: 404 for a missing file, 400 for any other. */
function asHttpError(error: unknown): unknown {
  if (!(error instanceof SnapshotFileError)) return error;
  return error.missing ? notFound(error.message) : badRequest(error.message);
}

/** /_localplane/snapshot and /restore: the whole state to a file and back. */
export function snapshotRoutes(deps: SnapshotRouteDeps) {
  const app = new OpenApiHono('admin');
  app.openapi(
    {
      method: 'post',
      path: '/snapshot',
      summary: 'Write the whole state (database, objstore, ids, clock, limits) to one file',
      body: snapshotRequest,
      response: { status: 200, description: 'The file written and its size', schema: snapshotSchema },
      errors: [httpError(400, 'The file cannot be written', { unwritable: "cannot write the snapshot file /nonexistent/state.snapshot: ENOENT: no such file or directory, open '/nonexistent/state.snapshot.tmp'" })],
    },
    (c, { body }) => {
      try {
        return c.json(deps.save(body.path));
      } catch (error) {
        throw asHttpError(error);
      }
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/restore',
      summary: 'Replace the whole state with a snapshot file; work in flight resumes as after a restart',
      body: snapshotRequest,
      response: { status: 200, description: 'Restored', schema: restoredSchema },
      errors: [
        notFoundError('Snapshot file', 'the snapshot file /tmp/state.snapshot does not exist'),
        httpError(400, 'The file is not a usable snapshot (nothing of it is restored), or was taken with another seed or other fixtures', {
          damaged: '/tmp/state.snapshot is not a usable localplane snapshot: its data does not match its checksum',
          other_seed: '/tmp/state.snapshot cannot be restored here: it was taken with seed 7, this instance has seed 1',
          unusable_row:
            '/tmp/state.snapshot cannot be restored here: its table objstore_created_buckets holds the bucket name "../../victim", not a name S3 creates a bucket with',
          not_a_file: 'cannot read the snapshot file /dev/zero: it is not a regular file (a named pipe, a device or a folder)',
        }),
      ],
    },
    async (c, { body }) => {
      try {
        await deps.restore(body.path);
      } catch (error) {
        throw asHttpError(error);
      }
      return c.json({ status: 'restored' as const, path: body.path });
    },
  );
  return app;
}
