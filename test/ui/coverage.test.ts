/**
 * A dashboard action for every route: every admin route and every API route is named by an element of some dashboard
 * page (its data-route attribute, or a link straight to it), found by walking the dashboard from /ui as a browser
 * would, through its links and its htmx gets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { credentialsOf, fullKey, type FixturesView } from '../support/instance.ts';

/** Routes no dashboard element calls, each with the reason. */
const EXCEPTIONS: Record<string, string> = {
  'GET /info': 'service info for SDK clients at start-up: nothing to look at or drive',
  'GET /api/v1/info': 'the same service info under the API prefix',
  'GET /openapi.json': 'the API reference as a document, not a resource',
  'GET /docs': 'the API reference page, not a resource',
  'GET /docs/:asset': "the reference page's scripts and styles",
  'GET /_localplane/objstore/journal': 'the older alias of the journal filtered to the objstore, which Requests shows',
  'POST /_localplane/requests/find': "the journal's filter as a body: Requests filters through the query (GET)",
  'GET /_localplane/requests/count': 'Requests shows the entries themselves, and the overview their rate',
  'POST /_localplane/sessions/:session_id/runs': 'synthetic runs for tests of exports: no view has sessions yet',
  'GET /api/v1/bulk-exports/destinations/:destination_id': "the exports view's list shows each destination whole",
  'GET /api/v1/bulk-exports/runs': "every run of the workspace at once: an export's page lists its own",
  'GET /api/v1/bulk-exports/:bulk_export_id/runs/:run_id': "an export's page lists its runs whole",
  'GET /v2/deployments/:deployment_id/revisions/:revision_id': "a deployment's page lists its revisions whole",
  'GET /v2/auth/providers/:provider_id': 'the providers page lists each provider whole',
  'GET /v2/listeners/:listener_id': 'the listeners page lists each listener whole',
  'POST /v1/projects/:project_id/deploy_logs':
    "the hosted CLI's log of every revision at once: a deployment's page shows each revision's deploy log",
};

/** Segments that are ids, which one page of each kind stands for. */
const ID_SEGMENT = /^([0-9a-f]{8}-[0-9a-f-]{27}|\d+)$/;
const MAX_PAGES = 300;

const unescape = (text: string) =>
  text.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<');

/** The route whose pattern the method and path match. */
function routeOf(method: string, path: string, routes: readonly string[]): string | undefined {
  return routes.find((route) => {
    const [routeMethod, pattern] = route.split(' ') as [string, string];
    return routeMethod === method && new RegExp(`^${pattern.replace(/:\w+/g, '[^/]+')}$`).test(path);
  });
}

/**
 * A page's kind: its path with ids made alike, the names of its query, the workspace it shows (a workspace may offer
 * what another is refused) and the objstore folder (to reach an object), so one page of each kind is fetched.
 */
function pageKind(url: URL): string {
  const path = url.pathname
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
    .join('/');
  const shown = ['workspace_id', 'prefix'].map((name) => url.searchParams.get(name) ?? '');
  return `${path}?${[...new Set(url.searchParams.keys())].sort().join('&')}@${shown.join('@')}`;
}

interface Walk {
  /** Each route named, with a page naming it. */
  named: Map<string, string>;
  /** data-route values that match no route, with their page. */
  unknown: string[];
  pages: number;
}

/** Walks the dashboard from /ui through its links and htmx gets, a page of each kind. */
async function walk(lp: InProcessLocalplane, routes: readonly string[]): Promise<Walk> {
  const named = new Map<string, string>();
  const unknown: string[] = [];
  const seen = new Set<string>();
  const queue = ['/ui'];
  let pages = 0;
  while (queue.length > 0 && pages < MAX_PAGES) {
    const path = queue.shift()!;
    pages += 1;
    const response = await lp.request(path);
    expect(response.status, path).toBeLessThan(500);
    if (!(response.headers.get('content-type') ?? '').startsWith('text/html')) continue;
    const html = await response.text();
    for (const [, value] of html.matchAll(/data-route="([^"]*)"/g)) {
      for (const route of unescape(value!).split(', ')) {
        if (routes.includes(route)) named.set(route, named.get(route) ?? path);
        else unknown.push(`${route} (on ${path})`);
      }
    }
    for (const [, attribute, value] of html.matchAll(/\s(href|hx-get)="([^"#]*)/g)) {
      const url = new URL(unescape(value!), 'http://localhost');
      if (url.pathname.startsWith('/ui')) {
        if (url.pathname.startsWith('/ui/assets/') || value === '') continue;
        const kind = pageKind(url);
        if (!seen.has(kind)) {
          seen.add(kind);
          queue.push(`${url.pathname}${url.search}`);
        }
      } else if (attribute === 'href') {
        const route = routeOf('GET', url.pathname, routes);
        if (route) named.set(route, named.get(route) ?? path);
      }
    }
  }
  return { named, unknown, pages };
}

describe('the dashboard', () => {
  let lp: InProcessLocalplane;
  let fixtures: FixturesView;
  let routes: string[];
  let result: Walk;

  beforeAll(async () => {
    lp = await createLocalplane({ freezeClock: true, log: () => {} });
    fixtures = await fixturesOf(lp);
    routes = lp.routes.map(({ method, path }) => `${method} ${path}`);
    // Something of every kind for the pages to show: exports, a snapshot, an armed knob, a fault rule.
    const acme = fixtures.workspaces.find((workspace) => workspace.tier === 'plus')!;
    const asAcme = inProcessApi(lp, acme);
    const admin = inProcessApi(lp);
    const destination = await asAcme.post<{ id: string }>('/api/v1/bulk-exports/destinations', {
      display_name: 'coverage',
      config: {
        bucket_name: fixtures.objstore.buckets[0],
        prefix: 'coverage',
        endpoint_url: fixtures.objstore.endpoint_url,
      },
      credentials: credentialsOf(fullKey(fixtures)),
    });
    expect(destination.status, destination.text).toBe(200);
    const createExport = async () => {
      const created = await asAcme.post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destination.body.id,
        session_id: acme.sessions[0]!.id,
        start_time: acme.sessions[0]!.first_run_start_time,
        end_time: acme.sessions[0]!.last_run_start_time,
        format_version: 'v2_beta',
      });
      expect(created.status, created.text).toBe(200);
    };
    // One export done, with files; the newest, which the list links first, still to run (it can be cancelled).
    await createExport();
    await admin.post('/_localplane/clock/run-until-idle');
    await createExport();
    expect((await admin.post('/_localplane/faults/revisions', { stage: 'build' })).status).toBe(200);
    expect((await admin.post('/_localplane/snapshot', { name: 'coverage.snapshot' })).status).toBe(200);
    expect(
      (await admin.post('/_localplane/fault-rules', { match: { path: '/v2/listeners' }, action: { status: 503 } }))
        .status,
    ).toBe(201);
    result = await walk(lp, routes);
  });

  afterAll(async () => {
    await lp?.stop();
  });

  it('has an element calling every admin route and every API route, but the exceptions', () => {
    const missing = routes.filter((route) => !result.named.has(route) && !(route in EXCEPTIONS));
    expect(missing, `walked ${result.pages} pages`).toEqual([]);
  });

  it('names only routes that exist', () => {
    expect(result.unknown).toEqual([]);
    for (const route of Object.keys(EXCEPTIONS)) expect(routes, route).toContain(route);
  });

  it('keeps the exceptions to routes no page names', () => {
    const named = Object.keys(EXCEPTIONS).filter((route) => result.named.has(route));
    expect(named.map((route) => `${route} (on ${result.named.get(route)})`)).toEqual([]);
  });
});
