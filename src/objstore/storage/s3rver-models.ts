/**
 * s3rver's models, for the metadata and tags the storage keeps as s3rver keeps them. s3rver
 * 3.7.1 is CommonJS without type declarations, so they are loaded with createRequire and
 * described by the minimal interfaces below.
 */
import { createRequire } from 'node:module';

import { GatewayError } from '../s3-errors.ts';
import type { S3rverSubresource } from './s3rver-store.ts';

const requireCjs = createRequire(import.meta.url);

interface S3rverModels {
  S3Error: new (...args: never[]) => Error & { code: string; status: number };
  S3Object: new (bucket: string, key: string, content: null, headers: Readonly<Record<string, unknown>>) => { metadata: Record<string, string> };
  TaggingConfiguration: { validate(xml: string): S3rverSubresource };
}
let models: S3rverModels | null = null;

/** s3rver's models take a while to load: only once a request needs them, not at start. */
export function s3rverModels(): S3rverModels {
  return (models ??= {
    S3Error: requireCjs('s3rver/lib/models/error.js'),
    S3Object: requireCjs('s3rver/lib/models/object.js'),
    TaggingConfiguration: (requireCjs('s3rver/lib/models/config.js') as { TaggingConfiguration: S3rverModels['TaggingConfiguration'] }).TaggingConfiguration,
  });
}

/** Runs one of s3rver's models, its S3 errors thrown as the ones the gateway answers. */
function modelled<T>(make: () => T): T {
  const { S3Error } = s3rverModels();
  try {
    return make();
  } catch (err) {
    if (err instanceof S3Error) throw new GatewayError({ status: err.status, code: err.code, message: err.message });
    throw err;
  }
}

/**
 * The metadata s3rver keeps for an object put with these request headers (its own selection);
 * an invalid one (e.g. InvalidStorageClass) is thrown as the S3 error s3rver would answer.
 */
export function objectMetadata(
  bucket: string,
  key: string,
  headers: Readonly<Record<string, unknown>>,
): Record<string, string> {
  return modelled(() => new (s3rverModels().S3Object)(bucket, key, null, headers).metadata);
}

/** A Tagging document as s3rver keeps an object's tags (MalformedXML when not well-formed). */
export function taggingSubresource(xml: string): S3rverSubresource {
  return modelled(() => s3rverModels().TaggingConfiguration.validate(xml));
}
