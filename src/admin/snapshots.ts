import { Hono } from 'hono';
import { z } from 'zod';
import { SnapshotFileError } from '../snapshots/format.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import { jsonBody } from '../shared/validation.ts';

export interface SnapshotRouteDeps {
  save(path: string): { path: string; bytes: number };
  restore(path: string): Promise<void>;
}

/** A file on the machine localplane runs on; a relative path is taken from localplane's working directory. */
export const snapshotRequest = z.strictObject({ path: z.string().min(1).max(4096) });
export const snapshotResponse = z.object({ path: z.string(), bytes: z.int() });
export const restoreResponse = z.object({ status: z.literal('restored'), path: z.string() });

/** A snapshot file problem as the caller's error: 404 for a missing file, 400 for any other. */
function asHttpError(error: unknown): unknown {
  if (!(error instanceof SnapshotFileError)) return error;
  return error.missing ? notFound(error.message) : badRequest(error.message);
}

/** /_localplane/snapshot and /restore: the whole state to a file and back. */
export function snapshotRoutes(deps: SnapshotRouteDeps) {
  const app = new Hono();
  app.post('/snapshot', async (c) => {
    const { path } = await jsonBody(c, snapshotRequest);
    try {
      return c.json(deps.save(path) satisfies z.output<typeof snapshotResponse>);
    } catch (error) {
      throw asHttpError(error);
    }
  });
  app.post('/restore', async (c) => {
    const { path } = await jsonBody(c, snapshotRequest);
    try {
      await deps.restore(path);
    } catch (error) {
      throw asHttpError(error);
    }
    return c.json({ status: 'restored' as const, path } satisfies z.output<typeof restoreResponse>);
  });
  return app;
}
