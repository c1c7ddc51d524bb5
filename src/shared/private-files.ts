/**
 * Files that hold an instance's state (its database, the objstore's objects, snapshot files) hold
 * secrets too: destination credentials, objstore secret keys, users' data. They are readable by
 * their user alone, whatever the process's umask: files 0600, folders 0700. And a path given to
 * read may name anything: it is opened without waiting, and looked at before it is read.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_FOLDER_MODE = 0o700;

/** Makes the folder (and its missing parents) 0700; an existing one keeps its mode. */
export function makePrivateFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER_MODE });
}

/**
 * Leaves `directory` holding the empty private folders `names` and nothing else. A folder already
 * empty stays as it is: a reset mostly finds the folders as the last one left them, and removing
 * and making a folder costs the filesystem far more than looking into it.
 */
export function resetToEmptyFolders(directory: string, names: readonly string[]): void {
  const wanted = new Set(names);
  let entries: { name: string; isDirectory(): boolean }[] = [];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (wanted.has(entry.name) && entry.isDirectory() && readdirSync(path).length === 0) continue;
    rmSync(path, { recursive: true, force: true });
  }
  for (const name of names) makePrivateFolder(join(directory, name));
}

/**
 * Writes `data` as a new file at `path`, 0600. Whatever was there goes first: a symbolic link is
 * removed, not followed, and a named pipe cannot make the write wait for a reader.
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  rmSync(path, { force: true });
  const descriptor = openSync(path, 'wx', PRIVATE_FILE_MODE);
  try {
    fchmodSync(descriptor, PRIVATE_FILE_MODE);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let written = 0; written < bytes.byteLength;) written += writeSync(descriptor, bytes, written);
  } finally {
    closeSync(descriptor);
  }
}

/** O_NONBLOCK where the platform has it: opening a named pipe then returns at once instead of waiting for a writer. */
const NONBLOCKING = constants.O_NONBLOCK ?? 0;

/**
 * Opens a file for reading without ever waiting (a named pipe without a writer, a device) and
 * hands its descriptor and stats to `use`, then closes it: `use` decides from the stats whether
 * to read it at all.
 */
export function withFileOpen<T>(path: string, use: (descriptor: number, stats: Stats) => T): T {
  const descriptor = openSync(path, constants.O_RDONLY | NONBLOCKING);
  try {
    return use(descriptor, fstatSync(descriptor));
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Makes the file 0600, creating it (empty) when `create` says so, else leaving a missing one
 * missing: for files another library opens by name (SQLite's database, whose journal files take
 * its mode). Never follows a symbolic link nor waits on a named pipe: either is refused, as is
 * anything else that is not a regular file.
 */
export function ensurePrivateFile(path: string, { create }: { create: boolean }): void {
  const descriptor = openPrivateFile(path, { create });
  if (descriptor !== undefined) closeSync(descriptor);
}

/**
 * Opens the file for reading and writing as ensurePrivateFile makes it: 0600, created when `create` says so (else
 * undefined when missing), never through a symbolic link nor a named pipe, a regular file or refused.
 */
export function openPrivateFile(path: string, { create }: { create: boolean }): number | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(
      path,
      constants.O_RDWR | NONBLOCKING | (constants.O_NOFOLLOW ?? 0) | (create ? constants.O_CREAT : 0),
      PRIVATE_FILE_MODE,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !create) return undefined;
    if (code === 'ELOOP')
      throw new Error(`${path} is a symbolic link, where localplane keeps a file of its own`, { cause: error });
    throw error;
  }
  try {
    if (!fstatSync(descriptor).isFile())
      throw new Error(`${path} is not a regular file, where localplane keeps a file of its own`);
    fchmodSync(descriptor, PRIVATE_FILE_MODE);
  } catch (error) {
    closeSync(descriptor);
    throw error;
  }
  return descriptor;
}
