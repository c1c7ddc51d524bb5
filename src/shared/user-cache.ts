/**
 * The user's cache folder, which holds the fixture templates and the CLI's code cache: what is read from it must be the
 * user's own.
 */
import type { Stats } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * `$LOCALPLANE_CACHE_DIR`, else `localplane` in the user's cache folder (`$XDG_CACHE_HOME`,
 * else `~/.cache`): a folder of the user's, where no other user can plant a file.
 */
export function defaultCacheDir(): string {
  const configured = process.env.LOCALPLANE_CACHE_DIR;
  if (configured) return configured;
  const xdgCache = process.env.XDG_CACHE_HOME;
  return join(xdgCache && isAbsolute(xdgCache) ? xdgCache : join(homedir(), '.cache'), 'localplane');
}

/**
 * Why another user could have written it (owned by someone else, or writable by group or others), or null; files have
 * no owners on Windows.
 */
export function untrustedBecause(stats: Stats): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (stats.uid !== uid) return `is owned by uid ${stats.uid}, not ${uid}`;
  if ((stats.mode & 0o022) !== 0) return `is writable by group or others (mode ${(stats.mode & 0o777).toString(8)})`;
  return null;
}
