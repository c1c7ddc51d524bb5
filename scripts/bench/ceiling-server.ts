/**
 * The ceiling of the API rows: a bare Hono app on @hono/node-server (the stack localplane
 * serves with) that answers each path with bytes fetched once from localplane, with the same
 * headers. Spawned by the bench: `node --import tsx ceiling-server.ts <responses.json>`.
 */
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { CannedResponse } from './processes.ts';

const responses = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CannedResponse[];
const byPath = new Map(responses.map((response) => [response.path, response]));

const app = new Hono();
app.get('*', (c) => {
  const canned = byPath.get(c.req.path);
  if (!canned) return c.notFound();
  return c.body(canned.body, canned.status as 200, canned.headers);
});

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, ({ port }) => {
  console.log(`ceiling ready http://127.0.0.1:${port}`);
});
process.once('SIGTERM', () => process.exit(0));
