/**
 * Bundles the compiled CLI (dist/cli.js and every module it loads, hono and zod included) into
 * one CommonJS file, dist/cli.bundle.cjs, which bin/localplane.js runs through a V8 code cache
 * (src/cli-launch.ts): one file to read and compile instead of some 330 modules to resolve.
 * The export encoder's worker (dist/bulk-exports/export-worker.js, Arrow included) becomes
 * dist/bulk-exports/export-worker.bundle.cjs, which the encoder starts (bulk-exports/encoder-thread.ts).
 * Run by `npm run build` after tsc, from the dist/ it wrote.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { sourceFingerprint } from '../src/shared/source-fingerprint.ts';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
/**
 * Packages small enough to be worth bundling, all loaded at every start; the others load from node_modules as today.
 */
const BUNDLED_PACKAGES = /^(hono|@hono\/node-server|zod)(\/|$)/;
/**
 * The worker's pure-JavaScript packages. Loaded one module at a time they took most of its
 * 120-160 ms from start to its first answer (some 80 ESM modules resolved, and the CommonJS
 * ones scanned for their exports); bundled, it answers in 55-60 ms. better-sqlite3 (native)
 * and parquet-wasm (which reads its .wasm beside itself) load from node_modules.
 */
const WORKER_BUNDLED_PACKAGES = /^(apache-arrow|flatbuffers|tslib)(\/|$)/;

/**
 * Each module's `import.meta.url` stays the URL of its file in dist/, so that what it finds from
 * there (package.json, fixtures/, the export worker, its dependencies through createRequire, the
 * sources the template fingerprint reads) is found as when dist/ runs unbundled.
 */
const distModuleUrls: Plugin = {
  name: 'dist-module-urls',
  setup(esbuild) {
    esbuild.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      if (!path.startsWith(DIST) || !text.includes('import.meta')) return { contents: text, loader: 'js' };
      const fromDist = JSON.stringify(relative(DIST, path));
      const url = `require('node:url').pathToFileURL(require('node:path').join(__dirname, ${fromDist})).href`;
      return { contents: text.replaceAll('import.meta.url', `(${url})`), loader: 'js' };
    });
  },
};

/** Packages that `bundled` does not match load from node_modules. */
const packagesFromNodeModules = (bundled: RegExp): Plugin => ({
  name: 'external-packages',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, ({ path }) => (bundled.test(path) ? undefined : { path, external: true }));
  },
});

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Without comments and with escapes for what is not ASCII (names kept as written): the CLI's
  // launcher then reads its bundle as latin1, a one-byte string, with no UTF-8 decoding.
  minifyWhitespace: true,
  charset: 'ascii',
  logLevel: 'warning',
  // import.meta.resolve is reached only from sources (tsx), never from dist/.
  logOverride: { 'empty-import-meta': 'silent' },
} as const;

await build({
  ...common,
  entryPoints: [`${DIST}bulk-exports/export-worker.js`],
  outfile: `${DIST}bulk-exports/export-worker.bundle.cjs`,
  plugins: [packagesFromNodeModules(WORKER_BUNDLED_PACKAGES), distModuleUrls],
});

await build({
  ...common,
  entryPoints: [`${DIST}cli.js`],
  outfile: `${DIST}cli.bundle.cjs`,
  plugins: [packagesFromNodeModules(BUNDLED_PACKAGES), distModuleUrls],
  // What each start would otherwise compute by reading the source maps of some 40 modules (8 ms).
  define: {
    BUNDLED_GENERATOR_FINGERPRINT: JSON.stringify(sourceFingerprint(pathToFileURL(`${DIST}fixtures/seeding.js`))),
  },
  // import() of a package becomes require(): a function V8 restores from a code cache has no
  // callback for import() ("A dynamic import callback was not specified").
  supported: { 'dynamic-import': false },
});
