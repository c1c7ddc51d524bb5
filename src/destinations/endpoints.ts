import { isLoopbackName } from '../shared/browser-guard.ts';
import { checkEndpoint, invalidEndpoint, ObjstoreError } from './clients.ts';

/**
 * Production endpoints localplane serves with its embedded objstore, so a client's real
 * destination config works unchanged: the reference flow's standard storage endpoint, and S3's
 * global, regional, dual-stack and legacy regional endpoints. `*` stands for one host label
 * (a region such as `eu-west-1`).
 */
export const DEFAULT_ENDPOINT_ALIASES: readonly string[] = [
  'https://storage.googleapis.com',
  'https://s3.amazonaws.com',
  'https://s3.*.amazonaws.com',
  'https://s3.dualstack.*.amazonaws.com',
  'https://s3-*.amazonaws.com',
];

interface EndpointAlias {
  /** The endpoint itself; one trailing '/' allowed, since S3 clients send the same requests with or without it. */
  endpoint: RegExp;
  /** Its host alone: any other endpoint naming this host is a near miss. */
  host: RegExp;
}

const ALIAS_SHAPE = /^(?<scheme>https?):\/\/(?<host>[A-Za-z0-9*.-]+)(?<port>:\d{1,5})?$/;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compileAlias(alias: string): EndpointAlias {
  const shape = ALIAS_SHAPE.exec(alias);
  if (!shape) {
    throw new TypeError(
      `endpoint alias ${JSON.stringify(alias)} must be http(s)://<host>[:<port>], with * for one host label`,
    );
  }
  const { scheme, host, port = '' } = shape.groups!;
  const hostPattern = host!.split('*').map(escapeRegExp).join('[A-Za-z0-9-]+');
  return {
    endpoint: new RegExp(`^${scheme}://${hostPattern}${port}/?$`, 'i'),
    host: new RegExp(`^${hostPattern}$`, 'i'),
  };
}

/** The host an endpoint names, however malformed the rest (no scheme, a path, a port, user info). */
function hostOf(endpoint: string): string {
  const authority = endpoint
    .trim()
    .replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '')
    .split(/[/?#]/, 1)[0]!;
  return authority
    .slice(authority.lastIndexOf('@') + 1)
    .replace(/:\d*$/, '')
    .replace(/\.$/, '');
}

/**
 * Where a destination's endpoint_url is served from: omitted (the default cloud) or an alias
 * means the embedded objstore; a near miss of an alias (same host, anything else different:
 * scheme, path, port) is an invalid endpoint, as the real service holds the reference flow to
 * the exact endpoint; anything else is used as given, after the storage client's own check.
 * Throws at once for a malformed alias. `embeddedUrl` binds the embedded objstore if need be.
 */
/** Throws for a malformed alias, as createEndpointResolver does. */
export function checkEndpointAliases(aliases: readonly string[]): void {
  aliases.forEach(compileAlias);
}

const isAliasOf = (compiled: readonly EndpointAlias[], endpointUrl: string) =>
  compiled.some((alias) => alias.endpoint.test(endpointUrl));

/** Whether a destination of this endpoint_url writes to the embedded objstore: none given, or exactly an alias. */
export function isEmbeddedEndpoint(
  endpointUrl: string | null | undefined,
  aliases: readonly string[] = DEFAULT_ENDPOINT_ALIASES,
): boolean {
  return (
    endpointUrl === null ||
    endpointUrl === undefined ||
    endpointUrl === '' ||
    isAliasOf(aliases.map(compileAlias), endpointUrl)
  );
}

const ALLOWED_ENDPOINT_SHAPE = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Throws for an allowed endpoint that is not `host[:port]`. */
export function checkAllowedEndpoints(allowed: readonly string[]): void {
  for (const entry of allowed) {
    if (!ALLOWED_ENDPOINT_SHAPE.test(entry))
      throw new TypeError(`allowed endpoint ${JSON.stringify(entry)} must be host[:port]`);
  }
}

/**
 * Where destinations may send besides the embedded objstore, so that a page or a snapshot naming any other host cannot
 * make localplane a client of the user's network.
 */
export interface EndpointReach {
  /** `host[:port]` entries (a host alone: any port) a destination may name besides loopback. */
  allowed?: readonly string[];
  /** The host localplane is bound to, where its own objstore listens. */
  boundHost?: string;
}

/**
 * Throws, before anything is sent, for a resolved endpoint outside the reach: loopback, the bound host and the allowed
 * entries.
 */
export function endpointReachCheck(reach: EndpointReach): (endpointUrl: string) => void {
  const allowed = new Set(
    [...(reach.allowed ?? []), ...(reach.boundHost ? [reach.boundHost] : [])].map((entry) => entry.toLowerCase()),
  );
  return (endpointUrl) => {
    const url = new URL(endpointUrl);
    if (isLoopbackName(url.hostname) || allowed.has(url.hostname.toLowerCase()) || allowed.has(url.host.toLowerCase()))
      return;
    throw new ObjstoreError(
      `Invalid endpoint: ${endpointUrl}: localplane sends only to loopback, its own objstore and the production ` +
        `endpoints it serves; ` +
        `start it with --allow-endpoints ${url.host} (LOCALPLANE_ALLOW_ENDPOINTS) to send there`,
      'InvalidEndpoint',
    );
  };
}

export function createEndpointResolver(
  embeddedUrl: () => Promise<string>,
  aliases: readonly string[] = DEFAULT_ENDPOINT_ALIASES,
) {
  const compiled = aliases.map(compileAlias);
  return async (endpointUrl: string | null | undefined): Promise<string> => {
    if (endpointUrl === null || endpointUrl === undefined || endpointUrl === '') return embeddedUrl();
    if (isAliasOf(compiled, endpointUrl)) return embeddedUrl();
    const host = hostOf(endpointUrl);
    if (compiled.some((alias) => alias.host.test(host))) throw invalidEndpoint(endpointUrl);
    checkEndpoint(endpointUrl);
    return endpointUrl;
  };
}
