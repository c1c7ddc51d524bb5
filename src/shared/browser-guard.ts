/**
 * What a hostile web page could send to an instance on the user's machine, refused before a
 * handler runs:
 * - a Host that is not a loopback name, the bound host or an allowed name: a DNS-rebinding page
 *   reaches 127.0.0.1 under its own name, so its requests carry that name;
 * - a state-changing request (any method but GET, HEAD and OPTIONS) from another origin, as a
 *   cross-site form post or fetch: browsers mark it with `Sec-Fetch-Site` and `Origin`.
 * Requests without those headers (curl, SDKs, tests) are not a browser's and pass.
 */
import type { MiddlewareHandler } from 'hono';

import { HttpError } from './errors.ts';

export interface BrowserGuardOptions {
  /** The host the server is bound to: a name a client may use besides the loopback ones. */
  boundHost: string;
  /** More host names (no port) the server answers under, e.g. a container's service name. */
  allowedHosts?: readonly string[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A host name as compared: lower case, no trailing dot, an IPv6 address without brackets. */
const normalized = (hostname: string) => hostname.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1');

/** `localhost` and its subdomains (RFC 6761), 127.0.0.0/8 and ::1. */
export function isLoopbackName(hostname: string): boolean {
  const name = normalized(hostname);
  return name === 'localhost' || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name) || name === '::1';
}

export function browserGuard({ boundHost, allowedHosts = [] }: BrowserGuardOptions): MiddlewareHandler {
  const allowed = new Set([boundHost, ...allowedHosts].map(normalized));
  return async (c, next) => {
    const url = new URL(c.req.url);
    const hostname = normalized(url.hostname);
    if (!isLoopbackName(hostname) && !allowed.has(hostname)) {
      throw new HttpError(
        403,
        `Host "${url.host}" is not a name the admin API and the dashboard answer under: they answer loopback names (localhost, 127.0.0.1) and the host localplane is bound to; allow others with allowedHosts (--allow-hosts)`,
      );
    }
    if (!SAFE_METHODS.has(c.req.method)) {
      const site = c.req.header('sec-fetch-site');
      const origin = c.req.header('origin');
      const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
      if (crossSite || (origin !== undefined && origin !== url.origin)) {
        throw new HttpError(403, `Cross-origin ${c.req.method} refused: the admin API and the dashboard take changes only from their own origin ${url.origin}, not ${origin ?? `a ${site} page`}`);
      }
    }
    await next();
  };
}
