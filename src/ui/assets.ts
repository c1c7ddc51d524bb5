import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Hono } from 'hono';
import { etag } from 'hono/etag';

const resolvePackageFile = createRequire(import.meta.url).resolve;

/**
 * The dashboard's own files live in src/ui/assets/ (shipped with the package): reached from
 * src/ui/ and from dist/ui/ alike, as the compiler copies no CSS.
 */
const OWN_ASSETS = new URL('../../src/ui/assets/', import.meta.url);

/** Every file the dashboard serves, by the name it has under /ui/assets/: nothing comes from elsewhere. */
const FILES: Readonly<Record<string, { path: () => string; type: string }>> = {
  'ui.css': { path: () => fileURLToPath(new URL('ui.css', OWN_ASSETS)), type: 'text/css; charset=utf-8' },
  'ui.js': { path: () => fileURLToPath(new URL('ui.js', OWN_ASSETS)), type: 'text/javascript; charset=utf-8' },
  'htmx.min.js': {
    path: () => resolvePackageFile('htmx.org/dist/htmx.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'sse.min.js': {
    path: () => resolvePackageFile('htmx-ext-sse/dist/sse.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uPlot.iife.min.js': {
    path: () => resolvePackageFile('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uPlot.min.css': { path: () => resolvePackageFile('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export type AssetName = keyof typeof FILES & string;

export const assetPath = (name: AssetName) => `/ui/assets/${name}`;

interface Asset {
  bytes: Uint8Array<ArrayBuffer>;
  gzipped: Uint8Array<ArrayBuffer>;
}

const loaded = new Map<string, Asset>();

/** Read and compressed once, on first use (about 150 KB in all), and answered from memory. */
function asset(name: string): Asset {
  let found = loaded.get(name);
  if (!found) {
    const bytes = new Uint8Array(readFileSync(FILES[name]!.path()));
    loaded.set(name, (found = { bytes, gzipped: new Uint8Array(gzipSync(bytes)) }));
  }
  return found;
}

/** /ui/assets/<name>: revalidated on each use (ETag), gzipped for clients that take it. */
export function assetRoutes() {
  const app = new Hono();
  app.use('*', etag());
  app.get('/:name', (c) => {
    const name = c.req.param('name');
    if (!Object.hasOwn(FILES, name)) return c.json({ detail: 'Not Found' }, 404);
    const { bytes, gzipped } = asset(name);
    const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    c.header('content-type', FILES[name]!.type);
    c.header('cache-control', 'no-cache');
    c.header('vary', 'accept-encoding');
    if (!gzip) return c.body(bytes);
    c.header('content-encoding', 'gzip');
    return c.body(gzipped);
  });
  return app;
}
