import { randomBytes } from 'node:crypto';
import { copyFile, link, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** link() failures that mean "no hard links between these two places": copy instead. */
const LINK_UNSUPPORTED = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK']);

/**
 * Puts `source` at `destination` as a hard link, else a copy, staged beside the destination
 * and renamed over it: a reader never sees a partial file, and a file already there is
 * replaced in one step.
 */
export async function placeFile(source: string, destination: string): Promise<void> {
  const staging = path.join(path.dirname(destination), `.lp-staging-${randomBytes(6).toString('hex')}`);
  try {
    await link(source, staging);
  } catch (error) {
    if (!LINK_UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    await copyFile(source, staging);
  }
  try {
    await rename(staging, destination);
  } finally {
    await rm(staging, { force: true });
  }
}
