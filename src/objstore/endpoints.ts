import { checkEndpoint } from './client.ts';

/**
 * Where a destination's endpoint_url is served from: omitted means the default cloud,
 * which localplane serves with its embedded objstore; anything else is used as given,
 * after the same well-formedness check the real storage client makes.
 */
export function createEndpointResolver(embeddedUrl: () => string) {
  return (endpointUrl: string | null | undefined): string => {
    if (endpointUrl === null || endpointUrl === undefined || endpointUrl === '') return embeddedUrl();
    checkEndpoint(endpointUrl);
    return endpointUrl;
  };
}
