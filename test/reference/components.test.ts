import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// Loads every domain's module, and with them the components they name (see nameComponents).
import '../../src/localplane.ts';
import { openapiDocument, type JsonSchema } from '../../src/openapi/document.ts';

/**
 * Compares localplane's generated component schemas with the hosted service's reference
 * document (run by `npm run check:reference`, which names it): the same fields, the same
 * required fields, compatible types, and enum values the reference knows.
 */
const referencePath = process.env.LOCALPLANE_REFERENCE_OPENAPI;
if (!referencePath)
  throw new Error('LOCALPLANE_REFERENCE_OPENAPI names the reference OpenAPI document: run npm run check:reference');
const reference = JSON.parse(readFileSync(referencePath, 'utf8')) as {
  components: { schemas: Record<string, JsonSchema> };
};
const ours = openapiDocument().components.schemas;

/**
 * Where localplane knowingly differs, each with its reason. A difference that appears or
 * goes away fails the check, so this list stays exact.
 */
const KNOWN_DIFFERENCES = [
  // The export request's all_experiments (which the hosted service added after the reference) is echoed, as BulkExport
  // echoes every request field.
  'BulkExport: field all_experiments not in the reference',
  // pydantic v2 (and so FastAPI) sends input and ctx; the reference's ValidationError predates them.
  'ValidationError: field ctx not in the reference',
  'ValidationError: field input not in the reference',
];

function resolve(schemas: Record<string, JsonSchema>, schema: JsonSchema | undefined): JsonSchema | undefined {
  const ref = schema?.$ref as string | undefined;
  return ref ? resolve(schemas, schemas[ref.split('/').pop()!]) : schema;
}

/**
 * The alternatives of a schema without its null branch: `anyOf: [X, {type: null}]` and `type: [X, "null"]` both give X.
 */
function nonNull(schemas: Record<string, JsonSchema>, schema: JsonSchema | undefined): JsonSchema[] {
  const resolved = resolve(schemas, schema);
  if (!resolved) return [];
  const anyOf = resolved.anyOf as JsonSchema[] | undefined;
  if (anyOf) return anyOf.flatMap((branch) => nonNull(schemas, branch));
  const type = resolved.type;
  if (type === 'null') return [];
  if (Array.isArray(type)) return type.filter((t) => t !== 'null').map((t) => ({ ...resolved, type: t }));
  return [resolved];
}

const kind = (schema: JsonSchema) =>
  schema.type === 'integer' ? 'number' : ((schema.type as string | undefined) ?? 'any');

function compare(
  path: string,
  ourSchema: JsonSchema | undefined,
  theirSchema: JsonSchema | undefined,
  out: string[],
): void {
  // A reference to another of our components is compared as that component.
  if (ourSchema?.$ref) return;
  const ourBranches = nonNull(ours, ourSchema);
  const theirBranches = nonNull(reference.components.schemas, theirSchema);
  if (ourBranches.length === 0 || theirBranches.length === 0) return;
  for (const our of ourBranches) {
    const match = theirBranches.find(
      (candidate) => kind(candidate) === kind(our) || kind(candidate) === 'any' || kind(our) === 'any',
    );
    if (!match) {
      out.push(`${path}: type ${kind(our)} where the reference has ${theirBranches.map(kind).join(' | ')}`);
      continue;
    }
    if (our.enum && match.enum) {
      for (const value of our.enum as unknown[]) {
        if (!(match.enum as unknown[]).includes(value))
          out.push(`${path}: enum value ${String(value)} not in the reference`);
      }
    }
    if (kind(our) === 'array') compare(`${path}[]`, our.items as JsonSchema, match.items as JsonSchema, out);
    if (our.properties && match.properties) compareObjects(path, our, match, out);
  }
}

function compareObjects(path: string, our: JsonSchema, theirs: JsonSchema, out: string[]): void {
  // A loose object (Kubernetes-style volumes, sidecars ...) keeps whatever fields it is given.
  if (our.additionalProperties !== false) return;
  const ourFields = our.properties as Record<string, JsonSchema>;
  const theirFields = theirs.properties as Record<string, JsonSchema>;
  for (const field of Object.keys(theirFields)) if (!(field in ourFields)) out.push(`${path}: field ${field} missing`);
  for (const field of Object.keys(ourFields)) {
    if (!(field in theirFields)) out.push(`${path}: field ${field} not in the reference`);
    else compare(`${path}.${field}`, ourFields[field], theirFields[field], out);
  }
  const ourRequired = (our.required as string[] | undefined) ?? [];
  for (const field of (theirs.required as string[] | undefined) ?? []) {
    if (!ourRequired.includes(field)) out.push(`${path}: field ${field} required by the reference, optional here`);
  }
}

describe('localplane OpenAPI components against the reference document', () => {
  const shared = Object.keys(ours).filter((name) => name in reference.components.schemas);

  it('covers the reference components that the emulated endpoints answer with', () => {
    expect(shared).toEqual(
      expect.arrayContaining([
        'BulkExportDestination',
        'BulkExport',
        'BulkExportRun',
        'Deployment',
        'Revision',
        'HTTPValidationError',
      ]),
    );
  });

  it('differs from the reference only where known', () => {
    const differences: string[] = [];
    for (const name of shared) compare(name, ours[name], reference.components.schemas[name], differences);
    expect(differences.sort()).toEqual([...KNOWN_DIFFERENCES].sort());
  });
});
