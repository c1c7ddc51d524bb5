import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { destinationResponseSchema, exportResponseSchema, runResponseSchema } from '../bulk-exports/schemas.ts';
import {
  codehostIntegrationSchema,
  codehostRepositorySchema,
  deploymentResponseSchema,
  deploymentsListSchema,
  oauthProviderResponseSchema,
  revisionResponseSchema,
  revisionsListSchema,
} from '../deployments/schemas.ts';

const errorBodySchema = z.object({ detail: z.string() });

const validationErrorSchema = z.object({
  loc: z.array(z.union([z.string(), z.int()])),
  msg: z.string(),
  type: z.string(),
  input: z.unknown().optional(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});

const validationErrorBodySchema = z.object({ detail: z.array(validationErrorSchema) });

/** The schemas of what the API answers, under the component names of the hosted service's OpenAPI document. */
const COMPONENTS: Record<string, z.ZodType> = {
  BulkExportDestination: destinationResponseSchema,
  BulkExport: exportResponseSchema,
  BulkExportRun: runResponseSchema,
  Deployment: deploymentResponseSchema,
  DeploymentsList: deploymentsListSchema,
  Revision: revisionResponseSchema,
  RevisionsList: revisionsListSchema,
  OAuthProviderResponse: oauthProviderResponseSchema,
  CodehostIntegration: codehostIntegrationSchema,
  CodehostRepository: codehostRepositorySchema,
  HTTPError: errorBodySchema,
  ValidationError: validationErrorSchema,
  HTTPValidationError: validationErrorBodySchema,
};

export type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, unknown>;
  components: { schemas: Record<string, JsonSchema> };
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

let built: OpenApiDocument | null = null;

/**
 * localplane's OpenAPI document, generated from the zod schemas its responses are typed
 * with: what its own tests validate responses against.
 */
export function openapiDocument(): OpenApiDocument {
  if (built) return built;
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}`, io: 'output' });
  const components: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // Each generated schema names itself as a standalone document; inside components it is not one.
    const { $schema: _dialect, $id: _id, ...component } = schema as JsonSchema;
    components[id] = component;
  }
  built = { openapi: '3.1.0', info: { title: 'localplane', version }, paths: {}, components: { schemas: components } };
  return built;
}
