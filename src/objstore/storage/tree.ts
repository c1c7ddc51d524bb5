/** The store's own directory as a list of entries and back, for snapshots. */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { isIncomingFile, isKeyFolder, keyOfObjectFile } from './s3rver-layout.ts';
import type { ObjstoreTreeEntry } from '../types.ts';

/**
 * Every folder and file under `root`, parents before children, in name order (so the same
 * store gives the same list). Uploads still arriving (a temporary file at the root) are left out.
 * Synchronous on purpose: nothing can write to the store between two reads.
 */
export function readTree(root: string): ObjstoreTreeEntry[] {
  const entries: ObjstoreTreeEntry[] = [];
  const walk = (folder: string, relative: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
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

/** Whether a snapshot's entry path stays inside the store's directory. */
export function isSafeTreePath(entryPath: string): boolean {
  const segments = entryPath.split('/');
  return entryPath !== '' && !path.isAbsolute(entryPath) && !entryPath.includes('\\') && segments.every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Writes entries read by readTree under `root` (which is expected empty). */
export function writeTree(root: string, entries: readonly ObjstoreTreeEntry[]): void {
  mkdirSync(root, { recursive: true });
  for (const entry of entries) {
    const full = path.join(root, ...entry.path.split('/'));
    if (entry.data === null) mkdirSync(full, { recursive: true });
    else writeFileSync(full, entry.data);
  }
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
