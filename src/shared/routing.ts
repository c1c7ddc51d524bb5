import type { Hono, MiddlewareHandler } from 'hono';
import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

/**
 * The routes of an app's handlers (`:name` a path parameter); middleware is mounted for 'ALL' methods and makes no path
 * exist.
 */
export const handlerRoutes = (app: Pick<Hono, 'routes'>) =>
  app.routes.filter((route) => route.method !== 'ALL').map(({ method, path }) => ({ method, path }));

/**
 * What one memory holds at most before it starts again: a client walking through ids empties it
 * now and then, and a client sending long paths (up to Node's 16 KiB limit of a request's head)
 * fills it with few of them rather than with megabytes.
 */
const REMEMBERED_PATHS = 256;
const REMEMBERED_PATH_CHARS = 64 * 1024;

/**
 * What `find` answered for each path lately, found again without asking it (`extra` is what it
 * reads the answer from, which the path alone decides). An answer it throws is not remembered.
 */
export function rememberedByPath<T, Extra extends unknown[] = []>(
  find: (path: string, ...extra: Extra) => T,
): (path: string, ...extra: Extra) => T {
  const found = new Map<string, T>();
  let chars = 0;
  return (path, ...extra) => {
    let answer = found.get(path);
    if (answer === undefined) {
      if (found.size >= REMEMBERED_PATHS || chars + path.length > REMEMBERED_PATH_CHARS) {
        found.clear();
        chars = 0;
      }
      answer = find(path, ...extra);
      found.set(path, answer);
      chars += path.length;
    }
    return answer;
  };
}

/**
 * A trie router that remembers its matches by method and path until a route is added: hono's
 * RegExpRouter refuses this app's routes (a parameter beside fixed names, `/requests/:request_id`
 * beside `/requests/count`), and a trie search costs more than the rest of the routing.
 */
export class RememberingRouter<T> implements Router<T> {
  readonly name = 'RememberingRouter';
  private readonly trie = new TrieRouter<T>();
  private readonly byMethod = new Map<string, (path: string) => Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.trie.add(method, path, handler);
    this.byMethod.clear();
  }

  match(method: string, path: string): Result<T> {
    let matches = this.byMethod.get(method);
    if (matches === undefined) {
      matches = rememberedByPath((target) => this.trie.match(method, target));
      this.byMethod.set(method, matches);
    }
    return matches(path);
  }
}

const otherSlashForm = (path: string) => (path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`);

/**
 * What Starlette answers for a request that no route takes, before any route's middleware
 * (authentication included) runs: a path that exists with other methods is 405 with an
 * `Allow` header, a path that exists only with the other trailing slash is a 307 to it
 * (`redirect_slashes`, query kept), anything else the app's 404.
 * The route table is read from `app` at the first request, once every route is mounted.
 */
export function starletteRouting(app: Pick<Hono, 'routes'>): MiddlewareHandler {
  let methodsAt: ((path: string) => ReadonlySet<string>) | undefined;
  const methodsOf = (routes: TrieRouter<string>, path: string) => {
    const methods = new Set(routes.match('GET', path)[0].map(([method]) => method));
    if (methods.has('GET')) methods.add('HEAD');
    return methods;
  };

  return async (c, next) => {
    if (!methodsAt) {
      const routes = new TrieRouter<string>();
      for (const route of handlerRoutes(app)) routes.add('ALL', route.path, route.method);
      methodsAt = rememberedByPath((path) => methodsOf(routes, path));
    }
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
