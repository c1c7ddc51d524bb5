import { Hono } from 'hono';
import { DashboardApi, DashboardApiError } from './api.ts';
import { assetRoutes } from './assets.ts';
import { renderError } from './layout.tsx';
import { exportsView } from './views/exports.tsx';
import { faultsView } from './views/faults.tsx';
import { clockView } from './views/clock.tsx';
import { deploymentsView } from './views/deployments.tsx';
import { objectsView } from './views/objects.tsx';
import { overviewView } from './views/overview.tsx';
import { requestsView } from './views/requests.tsx';
import { stateView } from './views/state.tsx';
import { sqlView } from './views/sql.tsx';
import { neverFramedHeaders } from '../shared/never-framed.ts';

/**
 * The dashboard at /ui: pages rendered on the server from what the documented API answers,
 * called in process through `send` (the app's fetch, marked as an in-process call).
 */
export function uiModule(send: (request: Request) => Promise<Response>) {
  const api = new DashboardApi(send);
  const app = new Hono();
  app.onError((error, c) => {
    if (!(error instanceof DashboardApiError)) throw error;
    return renderError(c, error.status, error.detail);
  });
  app.use('*', async (c, next) => {
    await next();
    // The dashboard is never framed (no clickjacking of its buttons) and loads nothing from elsewhere.
    const headers = neverFramedHeaders(
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'self'",
    );
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    // A view's URL answers a whole page or, to htmx, a fragment: the browser's cache keeps them
    // apart, or Back would show the last fragment polled as the page.
    if (!c.res.headers.has('vary')) c.header('vary', 'HX-Request');
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-cache');
  });
  app.route('/assets', assetRoutes());
  app.route('/', overviewView(api));
  app.route('/requests', requestsView(api));
  app.route('/exports', exportsView(api));
  app.route('/objects', objectsView(api));
  app.route('/faults', faultsView(api));
  app.route('/clock', clockView(api));
  app.route('/deployments', deploymentsView(api));
  app.route('/state', stateView(api));
  // At the root: /ui/sql and its download /ui/sql.csv.
  app.route('/', sqlView(api));
  return { routes: app };
}
