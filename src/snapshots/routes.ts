import { z } from 'zod';
import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { badRequest, customIssue, notFound } from '../shared/errors.ts';
import { BODY_UNREADABLE } from '../shared/validation.ts';
import {
  SNAPSHOT_NAME,
  SNAPSHOT_NAME_RULE,
  UPLOAD_TOO_LARGE,
  type SavedSnapshot,
  type SnapshotFolder,
} from './folder.ts';
import { MAX_SNAPSHOT_SIZE_IN_WORDS, SnapshotFileError } from './format.ts';

export interface SnapshotRouteDeps {
  save(path: string): { path: string; bytes: number };
  restore(path: string): Promise<void>;
  folder: SnapshotFolder;
}

const snapshotName = z
  .string()
  .superRefine((name, ctx) => {
    if (!SNAPSHOT_NAME.test(name)) ctx.addIssue(customIssue('value_error', SNAPSHOT_NAME_RULE));
  })
  .meta({ pattern: SNAPSHOT_NAME.source, description: 'A file in the snapshots folder' });

const savedSnapshotSchema = z.object({
  name: z.string(),
  bytes: z.int(),
  modified_at: z.string().meta({ format: 'date-time' }),
}) satisfies z.ZodType<SavedSnapshot>;
const savedSnapshotsSchema = z.object({ folder: z.string(), snapshots: z.array(savedSnapshotSchema) });
const restoredSchema = z.object({ status: z.literal('restored'), name: z.string() });
export type SavedSnapshots = z.output<typeof savedSnapshotsSchema>;
export type Restored = z.output<typeof restoredSchema>;

/** What a body naming a path (as these endpoints once took) is told. */
const PATH_NOT_TAKEN =
  'a snapshot over HTTP is a file in the snapshots folder, named by "name" (a plain file name), not "path"; a ' +
  'file elsewhere is for localplane start --import and --export-on-exit, or lp.snapshot(file) and ' +
  'lp.restore(file) in process';

/**
 * `{"name"}`; a `path` is answered 400 PATH_NOT_TAKEN at once (the error map runs while the
 * body is validated, and an HttpError thrown there is the answer).
 */
const snapshotRequest = z.strictObject(
  { name: snapshotName },
  {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys' && issue.keys.includes('path')) throw badRequest(PATH_NOT_TAKEN);
      return undefined;
    },
  },
);
const nameParams = z.object({ name: snapshotName });

const EXAMPLE_FOLDER = '/home/me/.localplane/snapshots';
const NO_SUCH_SNAPSHOT = `there is no saved snapshot named "before.snapshot" in ${EXAMPLE_FOLDER}`;
const NOT_A_FILE =
  `${EXAMPLE_FOLDER}/linked.snapshot is not a saved snapshot: it is not a regular file (a ` +
  `symbolic link, a folder or a named pipe)`;
const FOLDER_LINKED =
  `${EXAMPLE_FOLDER} is a symbolic link, where localplane keeps its snapshots folder: remove ` +
  `it, or give another folder with snapshotsDir (--snapshots-dir)`;

/** A snapshot file problem as the caller's error: 404 for a missing file, 400 for any other. */
function asHttpError(error: unknown): unknown {
  if (!(error instanceof SnapshotFileError)) return error;
  return error.missing ? notFound(error.message) : badRequest(error.message);
}

/**
 * /_localplane/snapshot and /restore: the whole state to a file of the snapshots folder and back; /snapshots: those
 * files.
 */
export function snapshotRoutes({ save, restore, folder }: SnapshotRouteDeps) {
  const app = new OpenApiHono('admin');
  app.openapi(
    {
      method: 'post',
      path: '/snapshot',
      summary: 'Write the whole state (database, objstore, ids, clock, limits) to a file of the snapshots folder',
      description: 'A file of that name already there is replaced.',
      body: snapshotRequest,
      response: { status: 200, description: 'The file written', schema: savedSnapshotSchema },
      errors: [
        httpError(400, 'The body names a path; or the file cannot be written', {
          path_not_taken: PATH_NOT_TAKEN,
          unwritable:
            `cannot write the snapshot file ${EXAMPLE_FOLDER}/state.snapshot: ENOSPC: no space left on ` +
            `device, write`,
          folder_linked: FOLDER_LINKED,
        }),
      ],
    },
    (c, { body }) => {
      try {
        save(folder.fileToWrite(body.name));
      } catch (error) {
        throw asHttpError(error);
      }
      return c.json(folder.saved(body.name));
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/restore',
      summary: 'Replace the whole state with a file of the snapshots folder; work in flight resumes as after a restart',
      body: snapshotRequest,
      response: { status: 200, description: 'Restored', schema: restoredSchema },
      errors: [
        notFoundError('Saved snapshot', NO_SUCH_SNAPSHOT),
        httpError(
          400,
          'The body names a path; or the file is not a usable snapshot (nothing of it is restored), or was taken ' +
            'with another seed or other fixtures',
          {
            path_not_taken: PATH_NOT_TAKEN,
            damaged:
              `${EXAMPLE_FOLDER}/state.snapshot is not a usable localplane snapshot: its data does not ` +
              `match its checksum`,
            other_seed:
              `${EXAMPLE_FOLDER}/state.snapshot cannot be restored here: it was taken with seed 7, this ` +
              `instance has seed 1`,
            unusable_row:
              `${EXAMPLE_FOLDER}/state.snapshot cannot be restored here: its table ` +
              `objstore_created_buckets holds the bucket name "../../victim", not a name S3 creates a bucket with`,
            not_a_file: NOT_A_FILE,
          },
        ),
      ],
    },
    async (c, { body }) => {
      try {
        await restore(folder.savedFile(body.name));
      } catch (error) {
        throw asHttpError(error);
      }
      return c.json({ status: 'restored' as const, name: body.name });
    },
  );
  app.openapi(
    {
      method: 'get',
      path: '/snapshots',
      summary: 'The saved snapshots: the files of the snapshots folder, newest first',
      description:
        "`modified_at` is the file's modification time by the machine's clock (a file outlives the emulator clock " +
        'that was running when it was saved).',
      response: { status: 200, description: 'The snapshots folder and its files', schema: savedSnapshotsSchema },
      errors: [httpError(400, 'The snapshots folder cannot be read', { folder_linked: FOLDER_LINKED })],
    },
    (c) => c.json({ folder: folder.path, snapshots: folder.list() }),
  );
  app.openapi(
    {
      method: 'get',
      path: '/snapshots/:name',
      summary: 'Download a saved snapshot file (it holds the state with its secrets, as the file does)',
      params: nameParams,
      response: { status: 200, description: 'The file', contentType: 'application/octet-stream' },
      errors: [
        notFoundError('Saved snapshot', NO_SUCH_SNAPSHOT),
        httpError(400, 'The name is not a regular file', { not_a_file: NOT_A_FILE }),
      ],
    },
    (c, { params }) => {
      const headersOf = (snapshot: { name: string; bytes: number }) => ({
        'content-type': 'application/octet-stream',
        'content-length': String(snapshot.bytes),
        'content-disposition': `attachment; filename="${snapshot.name}"`,
      });
      // A HEAD is answered from the file's size: a stream opened for it would never be read, nor its file closed.
      if (c.req.method === 'HEAD') return c.body(null, 200, headersOf(folder.saved(params.name)));
      const { snapshot, body } = folder.download(params.name);
      return c.body(body, 200, headersOf(snapshot));
    },
  );
  app.openapi(
    {
      method: 'put',
      path: '/snapshots/:name',
      summary:
        'Upload a snapshot file into the snapshots folder (kept only if it is a whole snapshot file; one of that ' +
        'name is replaced)',
      params: nameParams,
      rawBody: {
        contentType: 'application/octet-stream',
        description: `A snapshot file, at most ${MAX_SNAPSHOT_SIZE_IN_WORDS}`,
      },
      response: { status: 200, description: 'The file kept', schema: savedSnapshotSchema },
      errors: [
        httpError(400, 'The upload is not a whole snapshot file (nothing is kept), or broke off', {
          damaged:
            'the upload "state.snapshot" is not a usable localplane snapshot: its data does not match its checksum',
          body_unreadable: BODY_UNREADABLE,
        }),
        httpError(413, 'The upload is larger than a snapshot file may be', { too_large: UPLOAD_TOO_LARGE }),
      ],
    },
    async (c, { params }) => {
      const declared = c.req.header('content-length');
      try {
        return c.json(
          await folder.receive(params.name, c.req.raw.body, declared === undefined ? undefined : Number(declared)),
        );
      } catch (error) {
        throw asHttpError(error);
      }
    },
  );
  app.openapi(
    {
      method: 'delete',
      path: '/snapshots/:name',
      summary: 'Delete a saved snapshot file',
      params: nameParams,
      response: { status: 204, description: 'Deleted' },
      errors: [
        notFoundError('Saved snapshot', NO_SUCH_SNAPSHOT),
        httpError(400, 'The name is not a regular file', { not_a_file: NOT_A_FILE }),
      ],
    },
    (c, { params }) => {
      folder.remove(params.name);
      return c.body(null, 204);
    },
  );
  return app;
}
