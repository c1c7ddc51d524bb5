import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { notFound } from '../shared/errors.ts';
import { openapiDocument } from './document.ts';
import { notFoundError } from './errors.ts';
import type { DocumentedRoute } from './declarations.ts';
import { OpenApiHono } from './routes.ts';
import { neverFramedHeaders } from '../shared/never-framed.ts';

/** Swagger UI's files, from the swagger-ui-dist package: nothing is fetched from elsewhere. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSET_TYPES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const assets = new Map<string, Uint8Array<ArrayBuffer>>();

/**
 * A file of the package, read once (at most 1.5 MB in all) and answered synchronously: a reply
 * that waited on the disk would be lost to a client that half-closes after its request (Node's
 * server then ends the socket at once).
 */
function assetBytes(name: string): Uint8Array<ArrayBuffer> {
  let bytes = assets.get(name);
  if (!bytes) assets.set(name, (bytes = new Uint8Array(readFileSync(join(SWAGGER_UI_DIR, name)))));
  return bytes;
}

// validatorUrl null: Swagger UI would otherwise send the document to a public validator.
// persistAuthorization: what Authorize was given survives a reload (in the page's localStorage).
const SWAGGER_UI_OPTIONS =
  "{ url: '/openapi.json', dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true, tryItOutEnabled: false, " +
  'persistAuthorization: true }';
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>localplane API reference</title>
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle(${SWAGGER_UI_OPTIONS});
  </script>
</body>
</html>
`;

const documentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
  components: z.looseObject({ schemas: z.record(z.string(), z.unknown()) }),
});

/**
 * GET /openapi.json (generated from the routes `documented` gives, once every route is mounted) and the /docs page that
 * renders it.
 */
export function openapiRoutes(documented: () => readonly DocumentedRoute[]) {
  const app = new OpenApiHono('reference');
  let document: string | undefined;

  app.openapi(
    {
      method: 'get',
      path: '/openapi.json',
      summary: "This API's OpenAPI 3.1 document, admin API included",
      response: { status: 200, description: 'The document', schema: documentSchema },
    },
    (c) =>
      c.body((document ??= JSON.stringify(openapiDocument(documented()))), 200, { 'content-type': 'application/json' }),
  );

  app.openapi(
    {
      method: 'get',
      path: '/docs',
      summary: 'A readable reference rendered from /openapi.json (Swagger UI)',
      response: { status: 200, description: 'The page', contentType: 'text/html' },
    },
    (c) => c.html(DOCS_PAGE, 200, neverFramedHeaders()),
  );

  app.openapi(
    {
      method: 'get',
      path: '/docs/:asset',
      summary: "The reference page's scripts and styles",
      response: { status: 200, description: 'The file', contentType: 'application/octet-stream' },
      errors: [notFoundError('Asset', 'Not Found')],
    },
    (c) => {
      const asset = c.req.param('asset')!;
      const type = Object.hasOwn(ASSET_TYPES, asset) ? ASSET_TYPES[asset] : undefined;
      if (!type) throw notFound('Not Found');
      return c.body(assetBytes(asset), 200, { 'content-type': type });
    },
  );

  return app;
}
