/** The storage's own directory as a list of entries and back, for snapshots. */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { makePrivateFolder, PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE } from '../../shared/private-files.ts';
import { BUCKET_MODE, bucketDirectory, isIncomingFile, isKeyFolder, keyOfObjectFile } from './files-layout.ts';
import type { StagedTree } from './storage.ts';
import type { ObjstoreTreeEntry } from '../types.ts';

/**
 * Every folder and file under `root`, parents before children, in name order (so the same
 * storage gives the same list). Uploads still arriving (a temporary file at the root) are left out.
 * Synchronous on purpose: nothing can write to the storage between two reads.
 */
export function readTree(root: string): ObjstoreTreeEntry[] {
  const entries: ObjstoreTreeEntry[] = [];
  const walk = (folder: string, relative: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      if (relative === '' && isIncomingFile(entry.name)) continue;
      const entryPath = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        entries.push({ path: entryPath, data: null });
        walk(full, entryPath);
      } else if (entry.isFile()) {
        entries.push({ path: entryPath, data: readFileSync(full) });
      }
    }
  };
  walk(root, '');
  return entries;
}

/** The longest name of a file or folder the file systems localplane runs on take (NAME_MAX), in bytes. */
const MAX_NAME_BYTES = 255;

/**
 * Whether a snapshot's entry path names a file or folder inside the storage's directory:
 * relative, '/'-separated names that are not empty, '.' or '..', hold no NUL (nor, on Windows,
 * a backslash) and are no longer than a file system takes.
 */
export function isSafeTreePath(entryPath: string): boolean {
  return (
    entryPath !== '' &&
    !path.isAbsolute(entryPath) &&
    !entryPath.includes('\0') &&
    !(path.sep === '\\' && entryPath.includes('\\')) &&
    entryPath
      .split('/')
      .every((name) => name !== '' && name !== '.' && name !== '..' && Buffer.byteLength(name) <= MAX_NAME_BYTES)
  );
}

/**
 * What keeps entries from being the contents of a storage whose buckets are `buckets`, in words;
 * undefined when they are usable. As readTree lists a storage: its root holds only the buckets'
 * folders, every other entry comes after its folder, and no path appears twice.
 */
export function treeProblem(entries: readonly ObjstoreTreeEntry[], buckets: readonly string[]): string | undefined {
  const known = new Set(buckets);
  const seen = new Set<string>();
  const folders = new Set<string>();
  for (const { path: entryPath, data } of entries) {
    const quoted = JSON.stringify(entryPath);
    if (!isSafeTreePath(entryPath)) return `its objstore path ${quoted} leaves the storage`;
    if (seen.has(entryPath)) return `its objstore path ${quoted} appears twice`;
    seen.add(entryPath);
    const parent = entryPath.slice(0, Math.max(entryPath.lastIndexOf('/'), 0));
    if (parent === '') {
      if (!known.has(entryPath)) return `its objstore path ${quoted} is no bucket of this instance`;
      if (data !== null) return `its objstore path ${quoted} is a file, where the storage keeps a folder`;
    } else if (!folders.has(parent)) {
      return `its objstore path ${quoted} is inside ${JSON.stringify(parent)}, which is no folder listed before it`;
    }
    if (data === null) folders.add(entryPath);
  }
  return undefined;
}

/**
 * Where a restored storage is written before it takes the storage's place, and where the storage it replaces goes
 * meanwhile: beside it, on its file system.
 */
const stagingOf = (root: string) => ({ staged: `${root}.restoring`, replaced: `${root}.replaced` });

/**
 * Writes entries (that treeProblem found usable) into a new folder beside the storage at `root`,
 * with a folder for each of `buckets`; files 0600, folders 0700. Nothing of the storage changes
 * until `install`.
 */
export function stageTree(root: string, entries: readonly ObjstoreTreeEntry[], buckets: readonly string[]): StagedTree {
  const { staged, replaced } = stagingOf(root);
  const discard = () => rmSync(staged, { recursive: true, force: true });
  discard();
  try {
    makePrivateFolder(staged);
    for (const bucket of buckets) mkdirSync(bucketDirectory(staged, bucket), { mode: BUCKET_MODE });
    for (const entry of entries) {
      const full = path.join(staged, ...entry.path.split('/'));
      if (entry.data === null) mkdirSync(full, { recursive: true, mode: PRIVATE_FOLDER_MODE });
      else writeFileSync(full, entry.data, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    }
  } catch (error) {
    discard();
    throw error;
  }
  return {
    install() {
      rmSync(replaced, { recursive: true, force: true });
      renameSync(root, replaced);
      renameSync(staged, root);
      rmSync(replaced, { recursive: true, force: true });
    },
    discard,
  };
}

/**
 * Readies the storage's folder at `root` (0700) on start. A restore that a crash cut short is
 * settled: the staged storage takes the place of one already moved aside, and what is left of
 * either goes. A storage holding a symbolic link is refused: the storage never makes one, and
 * following it would read, write and delete outside the storage.
 */
export function openTree(root: string): void {
  const { staged, replaced } = stagingOf(root);
  if (!existsSync(root)) {
    const moved = [staged, replaced].find((folder) => existsSync(folder));
    if (moved) renameSync(moved, root);
  }
  rmSync(staged, { recursive: true, force: true });
  rmSync(replaced, { recursive: true, force: true });
  makePrivateFolder(root);
  const link = readdirSync(root, { recursive: true, withFileTypes: true }).find((entry) => entry.isSymbolicLink());
  if (link)
    throw new Error(
      `${path.join(link.parentPath, link.name)} is a symbolic link, which the objstore never makes: remove it`,
    );
}

/** The objects of one bucket, in key order, with their sizes. */
export function listBucketObjects(root: string, bucket: string): { key: string; size: number }[] {
  const objects: { key: string; size: number }[] = [];
  const walk = (folder: string, relative: string) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const entryPath = `${relative}${entry.name}`;
      if (entry.isDirectory()) {
        if (isKeyFolder(entry.name)) walk(path.join(folder, entry.name), `${entryPath}/`);
      } else {
        const key = keyOfObjectFile(entryPath);
        if (key !== null) objects.push({ key, size: statSync(path.join(folder, entry.name)).size });
      }
    }
  };
  walk(path.join(root, bucket), '');
  return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The objects among readTree's entries, outside uploads in progress. */
export function objectsOf(entries: readonly ObjstoreTreeEntry[]): { bucket: string; key: string }[] {
  return entries.flatMap(({ path: entryPath, data }) => {
    const [bucket, ...rest] = entryPath.split('/');
    const key = data === null || rest.length === 0 ? null : keyOfObjectFile(rest.join('/'));
    return key === null ? [] : [{ bucket: bucket!, key }];
  });
}
