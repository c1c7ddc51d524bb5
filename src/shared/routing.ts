import type { Hono, MiddlewareHandler } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';

/** The routes of an app's handlers (`:name` a path parameter); middleware is mounted for 'ALL' methods and makes no path exist. */
export const handlerRoutes = (app: Hono<any>) => app.routes.filter((route) => route.method !== 'ALL').map(({ method, path }) => ({ method, path }));

const otherSlashForm = (path: string) => (path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`);

/**
 * What Starlette answers for a request that no route takes, before any route's middleware
 * (authentication included) runs: a path that exists with other methods is 405 with an
 * `Allow` header, a path that exists only with the other trailing slash is a 307 to it
 * (`redirect_slashes`, query kept), anything else the app's 404.
 * The route table is read from `app` at the first request, once every route is mounted.
 */
export function starletteRouting(app: Hono<any>): MiddlewareHandler {
  let routes: TrieRouter<string> | undefined;
  const methodsAt = (path: string) => {
    if (!routes) {
      routes = new TrieRouter<string>();
      for (const route of handlerRoutes(app)) routes.add('ALL', route.path, route.method);
    }
    const methods = new Set(routes.match('GET', path)[0].map(([method]) => method));
    if (methods.has('GET')) methods.add('HEAD');
    return methods;
  };

  return async (c, next) => {
    const methods = methodsAt(c.req.path);
    if (methods.has(c.req.method)) return next();
    if (methods.size > 0) {
      return c.json({ detail: 'Method Not Allowed' }, 405, { Allow: [...methods].sort().join(', ') });
    }
    if (c.req.path !== '/' && methodsAt(otherSlashForm(c.req.path)).size > 0) {
      const url = new URL(c.req.url);
      url.pathname = otherSlashForm(url.pathname);
      return c.body(null, 307, { Location: url.href });
    }
    return c.notFound();
  };
}
