import type { InstanceCore } from '../core.ts';
import { ObjstoreClients } from './clients.ts';
import { createEndpointResolver, endpointReachCheck, type EndpointReach } from './endpoints.ts';

export interface DestinationsOptions {
  /** Production endpoints served by the embedded objstore (see createEndpointResolver). */
  endpointAliases: readonly string[];
  /** Where destinations may send besides those. */
  reach: EndpointReach;
  /** Binds the embedded objstore if need be, and gives its URL. */
  embeddedEndpoint: () => Promise<string>;
}

/**
 * How exports and source uploads reach object storage: where a destination's endpoint is
 * served from, and one client per endpoint and key pair, closed on stop.
 */
export function destinationsModule(core: InstanceCore, options: DestinationsOptions) {
  const resolve = createEndpointResolver(options.embeddedEndpoint, options.endpointAliases);
  const checkReach = endpointReachCheck(options.reach);
  const resolveEndpoint = async (endpointUrl: string | null | undefined) => {
    const resolved = await resolve(endpointUrl);
    checkReach(resolved);
    return resolved;
  };
  const clients = new ObjstoreClients();
  core.teardown.add('resources', () => clients.close());
  return { clients, resolveEndpoint };
}

export type Destinations = ReturnType<typeof destinationsModule>;
