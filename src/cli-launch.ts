/**
 * What bin/localplane.js runs: the CLI bundled into one file (scripts/bundle-cli.ts), compiled
 * from a V8 code cache when `localplane start` has run before with this bundle and this Node.
 * Without the cache V8 parses the whole bundle; with it, `start` skips most of its compiling.
 * The cache is a file in the user's cache folder, written as `start` exits when it had none: it
 * holds the functions the run had compiled two seconds after launch, those of the first answers
 * included. Other commands, and `start --help`, neither read nor write it: they would leave a
 * cache without start's code.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { makePrivateFolder, withFileOpen, writePrivateFile } from './shared/private-files.ts';
import { defaultCacheDir, untrustedBecause } from './shared/user-cache.ts';

/**
 * The bundle's real path: the name its code cache is kept under, its functions' file in stack
 * traces (V8 keeps the file name a cache was compiled with), and where its modules find their files.
 */
const BUNDLE = realpathSync(fileURLToPath(new URL('./cli.bundle.cjs', import.meta.url)));
/** When the code cache is taken, after launch (or at exit, if that comes first). */
const CODE_CACHE_AFTER_MS = 2_000;
/** Code caches of other bundles or Nodes older than this are removed when a start writes one. */
const STALE_CODE_CACHE_MS = 7 * 24 * 3600 * 1000;

/**
 * Where the code cache of this bundle under this Node lives: its name changes with either, and
 * with the bundle's path. Two checkouts of one commit have the same bundle, but a cache compiled
 * by one names its file in the other's stack traces: each has its own.
 */
function codeCachePath(bundle: Buffer): string {
  const key = createHash('sha256')
    .update(`${process.version}\u0000${process.arch}\u0000${BUNDLE}\u0000`)
    .update(bundle)
    .digest('hex')
    .slice(0, 20);
  return join(defaultCacheDir(), `cli-${key}.v8cache`);
}

/** The cache's bytes, or undefined when there is none or it is not a plain file of the user's in a folder of theirs. */
function readCodeCache(path: string): Buffer | undefined {
  try {
    if (untrustedBecause(statSync(dirname(path))) !== null) return undefined;
    return withFileOpen(path, (descriptor, stats) =>
      stats.isFile() && untrustedBecause(stats) === null ? readFileSync(descriptor) : undefined,
    );
  } catch {
    return undefined;
  }
}

/** Removes the code caches written more than a week ago, and those a start died writing. */
function pruneCodeCaches(folder: string): void {
  const now = Date.now();
  for (const name of readdirSync(folder)) {
    if (!name.startsWith('cli-') || !(name.endsWith('.v8cache') || name.endsWith('.writing'))) continue;
    const path = join(folder, name);
    if (now - statSync(path).mtimeMs > STALE_CODE_CACHE_MS) rmSync(path, { force: true });
  }
}

/** Writes the cache beside its final name and renames it there, so that a parallel start reads a whole one or none. */
function writeCodeCache(path: string, data: Buffer): void {
  const writing = `${path}.${process.pid}.writing`;
  try {
    makePrivateFolder(dirname(path));
    if (untrustedBecause(statSync(dirname(path))) !== null) return;
    writePrivateFile(writing, data);
    renameSync(writing, path);
    pruneCodeCaches(dirname(path));
  } catch {
    // A cache that cannot be written costs the next start its speed, nothing else.
    rmSync(writing, { force: true });
  }
}

const bundle = readFileSync(BUNDLE);
const startsAnInstance = process.argv[2] === 'start' && !process.argv.some((arg) => arg === '--help' || arg === '-h');
const cached = startsAnInstance ? codeCachePath(bundle) : null;
const cachedData = cached === null ? undefined : readCodeCache(cached);
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname) ` +
    `{${bundle.toString(isAscii(bundle) ? 'latin1' : 'utf8')}\n})`,
  { filename: BUNDLE, cachedData },
);
if (cached !== null && (cachedData === undefined || script.cachedDataRejected)) {
  // Taken a while after launch, when a start has served its first answers: in a long run V8
  // drops the bytecode of what ran only at start, and a cache taken at exit lacked it (an
  // export's server left one that started the next in 186 ms instead of 139).
  let data: Buffer | undefined;
  setTimeout(() => (data = script.createCachedData()), CODE_CACHE_AFTER_MS).unref();
  // Written at exit, and not after a start that failed: the cache would lack what serving compiles.
  process.once('exit', (code) => code === 0 && writeCodeCache(cached, data ?? script.createCachedData()));
}
const bundleModule = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void)(
  bundleModule.exports,
  createRequire(BUNDLE),
  bundleModule,
  BUNDLE,
  dirname(BUNDLE),
);
