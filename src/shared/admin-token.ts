/**
 * A token the admin API and the dashboard require of requests that arrive over the network, for
 * an instance bound where other machines reach it. In-process requests (`lp.request()`, the
 * dashboard's own calls) come with no socket and need none.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

import { HttpError } from './errors.ts';

/** The cookie a browser keeps the token in once it opened a page with `?token=`. */
const TOKEN_COOKIE = 'localplane_token';

const digest = (text: string) => createHash('sha256').update(text).digest();

function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

export function requireToken(token: string): MiddlewareHandler {
  const expected = digest(token);
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && timingSafeEqual(digest(candidate), expected);
  return async (c, next) => {
    if ((c.env as Partial<HttpBindings> | undefined)?.incoming === undefined) return next();
    // A link with the token (typed once into the browser) leaves it in a cookie and is replaced by the same URL without
    // it.
    const offered = c.req.query('token');
    if (c.req.method === 'GET' && matches(offered)) {
      setCookie(c, TOKEN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      const url = new URL(c.req.url);
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    if (matches(bearerToken(c.req.header('authorization'))) || matches(getCookie(c, TOKEN_COOKIE))) return next();
    c.header('www-authenticate', 'Bearer realm="localplane"');
    throw new HttpError(
      401,
      `the admin API and the dashboard require the token localplane was started with: send Authorization: Bearer ` +
        `<token>, or open /ui?token=<token> in a browser`,
    );
  };
}
