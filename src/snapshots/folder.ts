/**
 * The snapshots folder: where the admin API saves, lists, hands out, receives and restores
 * snapshot files, each by a plain file name, so that a request names a file there and never a
 * path elsewhere on the machine. Only regular files with a snapshot name are saved snapshots: a
 * symbolic link, a folder or a hidden file (an upload still arriving) is none, and the folder
 * itself is never a symbolic link (a data dir checked into a repository could hold one to
 * ~/.ssh). It is made 0700 on the first save, not before.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  createReadStream,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { badRequest, HttpError, notFound } from '../shared/errors.ts';
import { BODY_UNREADABLE } from '../shared/validation.ts';
import { makePrivateFolder, PRIVATE_FILE_MODE } from '../shared/private-files.ts';
import { MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_SIZE_IN_WORDS, parseSnapshotFile } from './format.ts';

/** Letters, digits, `.`, `-` and `_`, not starting with `.` (no hidden file, no `..`), at most 128. */
export const SNAPSHOT_NAME = /^(?!\.)[A-Za-z0-9._-]{1,128}$/;
export const SNAPSHOT_NAME_RULE =
  'a snapshot name is a plain file name: letters, digits, ".", "-" and "_", at most 128, not starting with "."';

export interface SavedSnapshot {
  name: string;
  bytes: number;
  /** The file's modification time by the machine's clock, as ISO 8601. */
  modified_at: string;
}

export const UPLOAD_TOO_LARGE =
  `a snapshot upload is at most ${MAX_SNAPSHOT_SIZE_IN_WORDS}, the most a snapshot ` + `file may hold`;

const entryOf = (name: string, stats: Stats): SavedSnapshot => ({
  name,
  bytes: stats.size,
  modified_at: new Date(stats.mtimeMs).toISOString(),
});

/**
 * A file operation in the folder that failed for a reason of the machine's (permissions, a full disk), said in a
 * sentence.
 */
const unusable = (what: string, error: unknown) => badRequest(`${what}: ${(error as Error).message}`);

/** Runs a file operation, turning a failure other than an HttpError into a 400 that says what could not be done. */
function attempt<T>(what: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw unusable(what, error);
  }
}

export class SnapshotFolder {
  constructor(readonly path: string) {}

  /** The saved snapshots, newest first (then by name). */
  list(): SavedSnapshot[] {
    return attempt(`cannot read the snapshots folder ${this.path}`, () => {
      if (!this.exists()) return [];
      const saved: SavedSnapshot[] = [];
      for (const entry of readdirSync(this.path, { withFileTypes: true })) {
        if (!entry.isFile() || !SNAPSHOT_NAME.test(entry.name)) continue;
        const stats = this.statOf(entry.name);
        if (stats?.isFile()) saved.push(entryOf(entry.name, stats));
      }
      return saved.sort((a, b) => b.modified_at.localeCompare(a.modified_at) || a.name.localeCompare(b.name));
    });
  }

  /**
   * Where a snapshot of that name is written (the folder made on the first save); a link or file already there is
   * replaced, not followed.
   */
  fileToWrite(name: string): string {
    this.make();
    return join(this.path, name);
  }

  /** The saved snapshot of that name: 404 when there is none, 400 when the name is something else there. */
  saved(name: string): SavedSnapshot {
    return entryOf(name, this.look(name).stats);
  }

  /** The file of the saved snapshot of that name (404, 400 as `saved`). */
  savedFile(name: string): string {
    return this.look(name).file;
  }

  /** The file's bytes as a stream, opened without following a link put there since it was looked at. */
  download(name: string): { snapshot: SavedSnapshot; body: ReadableStream<Uint8Array> } {
    const { file } = this.look(name);
    let descriptor: number;
    try {
      descriptor = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw this.noneNamed(name);
      throw code === 'ELOOP' ? notASnapshot(file) : unusable(`cannot read ${file}`, error);
    }
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) {
      closeSync(descriptor);
      throw notASnapshot(file);
    }
    return {
      snapshot: entryOf(name, stats),
      body: Readable.toWeb(createReadStream(file, { fd: descriptor })) as ReadableStream<Uint8Array>,
    };
  }

  /**
   * Keeps an uploaded file under `name` if it is a whole snapshot file of this format (its
   * header, sizes and checksum; whether this instance can restore it is for the restore to
   * say): it streams to a hidden file beside, is checked, and is renamed into place, so a
   * damaged or too large upload leaves nothing and replaces nothing.
   */
  async receive(
    name: string,
    body: ReadableStream<Uint8Array> | null,
    declaredBytes: number | undefined,
  ): Promise<SavedSnapshot> {
    if (declaredBytes !== undefined && declaredBytes > MAX_SNAPSHOT_BYTES) throw new HttpError(413, UPLOAD_TOO_LARGE);
    this.make();
    const staging = join(this.path, `.upload-${randomBytes(6).toString('hex')}`);
    const keeping = `cannot keep the upload as ${join(this.path, name)}`;
    try {
      const handle = await open(staging, 'wx', PRIVATE_FILE_MODE).catch((error: unknown) => {
        throw unusable(keeping, error);
      });
      try {
        await handle.chmod(PRIVATE_FILE_MODE);
        let size = 0;
        for await (const chunk of readUpload(body)) {
          size += chunk.byteLength;
          if (size > MAX_SNAPSHOT_BYTES) throw new HttpError(413, UPLOAD_TOO_LARGE);
          await handle.write(chunk).catch((error: unknown) => {
            throw unusable(keeping, error);
          });
        }
      } finally {
        await handle.close();
      }
      parseSnapshotFile(`the upload "${name}"`, readFileSync(staging));
      attempt(keeping, () => renameSync(staging, join(this.path, name)));
    } finally {
      rmSync(staging, { force: true });
    }
    return this.saved(name);
  }

  /** Removes a saved snapshot (404 when there is none). */
  remove(name: string): void {
    const { file } = this.look(name);
    attempt(`cannot remove ${file}`, () => rmSync(file));
  }

  /**
   * The file of that name and its own stats (a link's, not its target's): 404 when there is none, 400 when it is no
   * regular file.
   */
  private look(name: string): { file: string; stats: Stats } {
    const file = join(this.path, name);
    const stats = attempt(`cannot read ${file}`, () => (this.exists() ? this.statOf(name) : null));
    if (stats === null) throw this.noneNamed(name);
    if (!stats.isFile()) throw notASnapshot(file);
    return { file, stats };
  }

  private noneNamed(name: string) {
    return notFound(`there is no saved snapshot named "${name}" in ${this.path}`);
  }

  private make(): void {
    attempt(`cannot make the snapshots folder ${this.path}`, () => {
      if (!this.exists()) makePrivateFolder(this.path);
    });
  }

  /** Whether the folder is there; a symbolic link or a file in its place is refused (400). */
  private exists(): boolean {
    let stats: Stats;
    try {
      stats = lstatSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    if (!stats.isDirectory()) {
      throw badRequest(
        `${this.path} is ${stats.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}, where localplane keeps ` +
          `its snapshots folder: remove it, or give another folder with snapshotsDir (--snapshots-dir)`,
      );
    }
    return true;
  }

  private statOf(name: string): Stats | null {
    try {
      return lstatSync(join(this.path, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}

const notASnapshot = (file: string) =>
  badRequest(`${file} is not a saved snapshot: it is not a regular file (a symbolic link, a folder or a named pipe)`);

/** The upload's chunks; a body that breaks off (the client went away) is FastAPI's 400. */
async function* readUpload(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (body === null) return;
  const reader = body.getReader();
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch {
      throw badRequest(BODY_UNREADABLE);
    }
    if (next.done) return;
    yield next.value;
  }
}
