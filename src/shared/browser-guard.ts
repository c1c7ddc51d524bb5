/**
 * What a hostile web page could send to an instance on the user's machine, refused before a
 * handler runs:
 * - a Host that is not a loopback name, the bound host or an allowed name, on every route of
 *   both ports (hostGuard, and the objstore's gateway with acceptsHost): a DNS-rebinding page
 *   reaches 127.0.0.1 under its own name, so its requests carry that name;
 * - to the admin API and the dashboard, a state-changing request (any method but GET, HEAD and
 *   OPTIONS) from another origin, as a cross-site form post or fetch: browsers mark it with
 *   `Sec-Fetch-Site` and `Origin` (browserGuard).
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
const normalized = (hostname: string) =>
  hostname
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');

/** `localhost` and its subdomains (RFC 6761), 127.0.0.0/8 and ::1. */
export function isLoopbackName(hostname: string): boolean {
  const name = normalized(hostname);
  return name === 'localhost' || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name) || name === '::1';
}

/** The host name of a Host header: without its port, an IPv6 address without brackets. */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') === -1 ? undefined : host.indexOf(']'));
  const colon = host.indexOf(':');
  return colon === -1 || host.indexOf(':', colon + 1) !== -1 ? host : host.slice(0, colon);
}

/**
 * Whether a Host header names this instance: a loopback name, the bound host or an allowed name.
 * A request without one is no browser's (every browser sends it) and passes.
 */
export function hostAllowList({
  boundHost,
  allowedHosts = [],
}: BrowserGuardOptions): (host: string | undefined) => boolean {
  const allowed = new Set([boundHost, ...allowedHosts].map(normalized));
  return (host) => {
    if (host === undefined || host === '') return true;
    const hostname = normalized(hostnameOf(host));
    return isLoopbackName(hostname) || allowed.has(hostname);
  };
}

/** The one line a request under a foreign Host gets, on either port. */
export const foreignHostMessage = (host: string) =>
  `Host "${host}" is not a name localplane answers under: it answers loopback names (localhost, 127.0.0.1) and ` +
  `the host it is bound to; allow others with --allow-hosts (LOCALPLANE_ALLOW_HOSTS, allowedHosts)`;

/**
 * Refuses, on every route, a request over the network whose Host does not name this instance. An
 * in-process request (`lp.request()`, `lp.fetch()`) has no Host header and no page behind it: it
 * may name any URL.
 */
export function hostGuard(options: BrowserGuardOptions): MiddlewareHandler {
  const accepts = hostAllowList(options);
  return async (c, next) => {
    const host = c.req.header('host');
    if (!accepts(host)) throw new HttpError(403, foreignHostMessage(host!));
    await next();
  };
}

/**
 * Refuses what a page could send the admin API or the dashboard: a foreign host in the URL (so also
 * in process, where hostGuard has no Host header to read), and a change from another origin.
 */
export function browserGuard(options: BrowserGuardOptions): MiddlewareHandler {
  const accepts = hostAllowList(options);
  return async (c, next) => {
    const url = new URL(c.req.url);
    if (!accepts(url.host)) throw new HttpError(403, foreignHostMessage(url.host));
    if (!SAFE_METHODS.has(c.req.method)) {
      const site = c.req.header('sec-fetch-site');
      const origin = c.req.header('origin');
      const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
      if (crossSite || (origin !== undefined && origin !== url.origin)) {
        throw new HttpError(
          403,
          `Cross-origin ${c.req.method} refused: the admin API and the dashboard take changes only from their own ` +
            `origin ${url.origin}, not ${origin ?? `a ${site} page`}`,
        );
      }
    }
    await next();
  };
}
