import { z } from 'zod';
import { HttpError } from '../shared/errors.ts';
import { PACKAGE_VERSION } from '../shared/package-version.ts';
import { namedComponents } from './components.ts';
import { errorsByStatus } from './errors.ts';
import { forcedResponse, PREFER_DESCRIPTION } from './prefer.ts';
import type {
  DocumentedRoute,
  ErrorResponse,
  RouteDeclaration,
  SecurityScheme,
  SuccessResponse,
} from './declarations.ts';

const errorBodySchema = z.object({ detail: z.string() });

const validationErrorSchema = z.object({
  loc: z.array(z.union([z.string(), z.int()])),
  msg: z.string(),
  type: z.string(),
  input: z.unknown().optional(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});

const validationErrorBodySchema = z.object({ detail: z.array(validationErrorSchema) });

/** The bodies of error answers, components after those the API families name. */
const ERROR_COMPONENTS: Readonly<Record<string, z.ZodType>> = {
  HTTPError: errorBodySchema,
  ValidationError: validationErrorSchema,
  HTTPValidationError: validationErrorBodySchema,
};

export type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, SecurityScheme['scheme']> };
}

const componentRef = (id: string) => `#/components/schemas/${id}`;
/** Ids of the schemas inlined into operations; never a component's name. */
const INLINE_ID = /^~(\d+)$/;

/**
 * JSON Schemas for zod schemas: components (see nameComponents) become `$ref`s to their
 * component, the others are inlined where they are used. `io` is 'input' for requests,
 * 'output' for responses.
 */
function convert(schemas: readonly z.ZodType[], io: 'input' | 'output') {
  const registry = z.registry<{ id: string }>();
  const ids = new Map<z.ZodType, string>();
  if (io === 'output')
    for (const [id, schema] of [...namedComponents(), ...Object.entries(ERROR_COMPONENTS)]) ids.set(schema, id);
  for (const schema of schemas) if (!ids.has(schema)) ids.set(schema, `~${ids.size}`);
  for (const [schema, id] of ids) registry.add(schema, { id });
  const converted = z.toJSONSchema(registry, { uri: componentRef, io, unrepresentable: 'any' }).schemas;
  const byId: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(converted)) {
    // Each generated schema names itself as a standalone document; inside an OpenAPI document it is not one.
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonSchema;
    byId[id] = rest;
  }
  // A route's schema used inside another route's is inlined there too.
  const inlined = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inlined);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as JsonSchema).$ref;
    const id = typeof ref === 'string' ? ref.slice(componentRef('').length) : '';
    if (INLINE_ID.test(id)) return inlined(byId[id]);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(value)]));
  };
  const jsonSchemaOf = (schema: z.ZodType): JsonSchema => {
    const id = ids.get(schema)!;
    return INLINE_ID.test(id) ? (inlined(byId[id]) as JsonSchema) : { $ref: componentRef(id) };
  };
  return {
    jsonSchemaOf,
    components: inlined(Object.fromEntries(Object.entries(byId).filter(([id]) => !INLINE_ID.test(id)))) as Record<
      string,
      JsonSchema
    >,
  };
}

const successesOf = (declaration: RouteDeclaration): readonly SuccessResponse[] =>
  Array.isArray(declaration.response) ? declaration.response : [declaration.response as SuccessResponse];

/** `/a/:id` as OpenAPI writes it: `/a/{id}`. */
export const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function preferRefusal(errors: readonly ErrorResponse[]): ErrorResponse {
  try {
    forcedResponse('code=418', errors);
  } catch (error) {
    return {
      status: 400,
      description: 'The Prefer header names an error this endpoint does not document',
      examples: { prefer_refused: { detail: (error as HttpError).detail } },
    };
  }
  throw new Error('code=418 is documented');
}

function parametersOf(route: DocumentedRoute, input: ReturnType<typeof convert>): JsonSchema[] {
  const { params, query } = route.declaration;
  const pathSchema = params ? input.jsonSchemaOf(params) : {};
  const pathProperties = (pathSchema.properties ?? {}) as Record<string, JsonSchema>;
  const parameters: JsonSchema[] = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: pathProperties[name!] ?? { type: 'string' },
  }));
  if (query) {
    const querySchema = input.jsonSchemaOf(query);
    const required = (querySchema.required ?? []) as string[];
    for (const [name, schema] of Object.entries((querySchema.properties ?? {}) as Record<string, JsonSchema>)) {
      const list = route.declaration.queryLists?.includes(name);
      parameters.push({
        name,
        in: 'query',
        required: required.includes(name),
        schema,
        ...(list ? { description: 'Comma-separated, sent several times, or both', style: 'form', explode: true } : {}),
      });
    }
  }
  parameters.push({
    name: 'Prefer',
    in: 'header',
    required: false,
    description: PREFER_DESCRIPTION,
    schema: { type: 'string', examples: ['code=404'] },
  });
  return parameters;
}

/** A path as the end of an operationId: each run of other characters dropped, the letter after it upper-cased. */
const camelCased = (path: string) =>
  path.replace(/[^A-Za-z0-9]+(\w)?/g, (_match, next: string | undefined) => next?.toUpperCase() ?? '');

function operation(
  route: DocumentedRoute,
  input: ReturnType<typeof convert>,
  output: ReturnType<typeof convert>,
): JsonSchema {
  const { declaration } = route;
  const responses: Record<string, JsonSchema> = {};
  for (const success of successesOf(declaration)) {
    // A body other than JSON (the /docs page and its files) is described by its content type alone.
    const content = success.schema
      ? { [success.contentType ?? 'application/json']: { schema: output.jsonSchemaOf(success.schema) } }
      : success.contentType && { [success.contentType]: {} };
    responses[success.status] = { description: success.description, ...(content ? { content } : {}) };
  }
  for (const error of errorsByStatus([...route.errors, preferRefusal(route.errors)])) {
    const schema = { $ref: componentRef(error.status === 422 ? 'HTTPValidationError' : 'HTTPError') };
    const examples = Object.fromEntries(Object.entries(error.examples).map(([name, value]) => [name, { value }]));
    responses[error.status] = {
      description: error.description,
      ...(error.headers ? { headers: error.headers } : {}),
      content: { 'application/json': { schema, examples } },
    };
  }
  return {
    tags: [route.tag],
    summary: declaration.summary,
    ...(declaration.description ? { description: declaration.description } : {}),
    operationId: `${declaration.method}${camelCased(route.path)}`,
    ...(route.security
      ? { security: route.security.map((schemes) => Object.fromEntries(schemes.map(({ id }) => [id, []]))) }
      : {}),
    parameters: parametersOf(route, input),
    ...(declaration.body
      ? {
          requestBody: {
            required: !declaration.bodyOptional,
            content: { 'application/json': { schema: input.jsonSchemaOf(declaration.body) } },
          },
        }
      : {}),
    ...(declaration.rawBody
      ? {
          requestBody: {
            required: true,
            description: declaration.rawBody.description,
            content: { [declaration.rawBody.contentType]: { schema: { type: 'string', format: 'binary' } } },
          },
        }
      : {}),
    responses,
  };
}

/** The schemes the routes' requirements name, by id; one id naming two schemes is a mistake in the declarations. */
function securitySchemes(routes: readonly DocumentedRoute[]): OpenApiDocument['components']['securitySchemes'] {
  const byId = new Map<string, SecurityScheme>();
  for (const scheme of routes.flatMap((route) => route.security?.flat() ?? [])) {
    const known = byId.get(scheme.id);
    if (known && known !== scheme) throw new Error(`two security schemes are named ${JSON.stringify(scheme.id)}`);
    byId.set(scheme.id, scheme);
  }
  return Object.fromEntries([...byId].map(([id, { scheme }]) => [id, scheme]));
}

/**
 * localplane's OpenAPI document, generated from the zod schemas its routes declare (see
 * OpenApiHono); without routes, the component schemas alone (what response bodies are
 * validated against, and what `npm run check:reference` compares): those the domains'
 * modules name when they load.
 */
export function openapiDocument(routes: readonly DocumentedRoute[] = []): OpenApiDocument {
  const requestSchemas = routes.flatMap(({ declaration: { params, query, body } }) =>
    [params, query, body].filter((schema) => schema !== undefined),
  );
  const responseSchemas = routes.flatMap(({ declaration }) =>
    successesOf(declaration).flatMap((success) => (success.schema ? [success.schema] : [])),
  );
  const input = convert(requestSchemas, 'input');
  const output = convert(responseSchemas, 'output');
  const paths: OpenApiDocument['paths'] = {};
  // The emulated API first, then the harness (in /docs too): a stable sort keeps each group's order.
  const harnessRank = (tag: string) => ['admin', 'reference'].indexOf(tag) + 1;
  for (const route of [...routes].sort((a, b) => harnessRank(a.tag) - harnessRank(b.tag))) {
    (paths[openapiPath(route.path)] ??= {})[route.declaration.method] = operation(route, input, output);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'localplane',
      version: PACKAGE_VERSION,
      description:
        'A local emulator of the bulk trace export and deployment API, and its harness knobs under /_localplane.',
    },
    paths,
    components: { schemas: output.components, securitySchemes: securitySchemes(routes) },
  };
}
