import type { InstanceCore } from '../core.ts';
import { ObjstoreClients } from './clients.ts';
import { createEndpointResolver } from './endpoints.ts';

export interface DestinationsOptions {
  /** Production endpoints served by the embedded objstore (see createEndpointResolver). */
  endpointAliases: readonly string[];
  /** Binds the embedded objstore if need be, and gives its URL. */
  embeddedEndpoint: () => Promise<string>;
}

/**
 * How exports and source uploads reach object storage: where a destination's endpoint is
 * served from, and one client per endpoint and key pair, closed on stop.
 */
export function destinationsModule(core: InstanceCore, options: DestinationsOptions) {
  const resolveEndpoint = createEndpointResolver(options.embeddedEndpoint, options.endpointAliases);
  const clients = new ObjstoreClients();
  core.teardown.add('resources', () => clients.close());
  return { clients, resolveEndpoint };
}

export type Destinations = ReturnType<typeof destinationsModule>;
