import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';

/**
 * Compares the operations of localplane's served /openapi.json with the hosted service's
 * reference document (run by `npm run check:reference`, which names it): every reference
 * operation localplane serves declares the reference's statuses, answers with the same
 * component where the reference names one, and asks for credentials the reference names.
 */
const referencePath = process.env.LOCALPLANE_REFERENCE_OPENAPI;
if (!referencePath)
  throw new Error('LOCALPLANE_REFERENCE_OPENAPI names the reference OpenAPI document: run npm run check:reference');

type Schema = { $ref?: string; type?: string; items?: Schema };
type Operation = {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: Record<string, string[]>[];
};
type Operations = Record<string, Record<string, Operation>>;
type Document = { paths: Operations; components: { securitySchemes?: Record<string, { description?: string }> } };
const reference = JSON.parse(readFileSync(referencePath, 'utf8')) as Document;

/**
 * Where localplane knowingly differs, each with its reason. A difference that appears or
 * goes away fails the check, so this list stays exact.
 */
const KNOWN_DIFFERENCES = [
  // reference-notes.md: 200 when every id was deleted, 207 when some failed; an unknown id is a failed entry, never a
  // 404.
  'DELETE /v2/deployments: status 404 not declared',
  // FastAPI documents a 422 on every operation with parameters; provider_id is any string, so none can fail validation.
  'GET /v2/auth/providers/{provider_id}: status 422 not declared',
];

/** Reference operations localplane does not serve, each with its reason; the list stays exact as the other. */
const KNOWN_UNSERVED = [
  // api-spec.md wins over the reference: the codehost family is served under /v1/integrations/forge/codehost.
  'GET /v1/integrations/codehost/install',
  'GET /v1/integrations/codehost/{integration_id}/repos',
];

/**
 * The reference's security schemes localplane accepts on none of the operations both serve,
 * each with its reason; the list stays exact as the others.
 */
const KNOWN_UNACCEPTED_SCHEMES = [
  // The hosted service's UI sessions; localplane has no sign-in, its clients send API keys.
  'Bearer Auth',
];

/** A path with its parameters unnamed: the two documents may name them differently. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

/** `Name`, `Name[]`, or null where the schema is inline. */
function componentOf(schema: Schema | undefined): string | null {
  if (schema?.$ref) return schema.$ref.split('/').pop()!;
  if (schema?.type === 'array' && schema.items?.$ref) return `${schema.items.$ref.split('/').pop()}[]`;
  return null;
}

/** The ids of the schemes an operation's requirements name, whichever alternative. */
const schemesOf = (operation: Operation) =>
  new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));

let lp: InProcessLocalplane;
let served: Document;
/** localplane's operation at a reference path, if it serves one. */
let ourOperation: (path: string, method: string) => Operation | undefined;
beforeAll(async () => {
  lp = await createLocalplane();
  served = (await (await lp.request('/openapi.json')).json()) as Document;
  const ours = new Map(Object.entries(served.paths).map(([path, operations]) => [shape(path), operations]));
  ourOperation = (path, method) => ours.get(shape(path))?.[method];
});
afterAll(() => lp.stop());

/** Every reference operation localplane serves: the reference's and localplane's declarations of it. */
function operationsBothServe() {
  return Object.entries(reference.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, theirs]) => {
      const own = ourOperation(path, method);
      return own ? [{ name: `${method.toUpperCase()} ${path}`, theirs, own }] : [];
    }),
  );
}

describe('localplane OpenAPI operations against the reference document', () => {
  it('serves every operation of the reference, but those known', () => {
    const unserved = Object.entries(reference.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => !ourOperation(path, method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(unserved.sort()).toEqual([...KNOWN_UNSERVED].sort());
  });

  it('declare the reference statuses and components of every operation both have', () => {
    const differences: string[] = [];
    const compared = operationsBothServe();
    for (const { name, theirs, own } of compared) {
      for (const [status, response] of Object.entries(theirs.responses)) {
        const declared = own.responses[status];
        if (!declared) {
          differences.push(`${name}: status ${status} not declared`);
          continue;
        }
        const expected = componentOf(response.content?.['application/json']?.schema);
        const actual = componentOf(declared.content?.['application/json']?.schema);
        if (expected !== null && expected !== actual)
          differences.push(`${name} ${status}: ${actual ?? 'an inline schema'} where the reference has ${expected}`);
      }
    }
    expect(compared.length).toBeGreaterThan(10);
    expect(differences.sort()).toEqual([...KNOWN_DIFFERENCES].sort());
  });

  /**
   * The schemes, not how the requirements combine them: the reference (FastAPI's rendering)
   * lists each scheme as an alternative of its own, though api-spec.md has the key and the
   * tenant id sent together.
   */
  it('ask for the reference security schemes, each the same credential as the reference scheme of its name', () => {
    const differences: string[] = [];
    const referenceSchemes = reference.components.securitySchemes ?? {};
    for (const [id, { description: _ours, ...scheme }] of Object.entries(served.components.securitySchemes ?? {})) {
      const { description: _theirs, ...theirs } = referenceSchemes[id] ?? {};
      if (!isDeepStrictEqual(scheme, theirs))
        differences.push(`scheme ${id}: ${JSON.stringify(scheme)} where the reference has ${JSON.stringify(theirs)}`);
    }
    const unaccepted = new Set<string>();
    for (const { name, theirs, own } of operationsBothServe()) {
      const [ourSchemes, theirSchemes] = [schemesOf(own), schemesOf(theirs)];
      expect(ourSchemes.size > 0, `${name} asks for a credential where the reference does`).toBe(theirSchemes.size > 0);
      for (const id of ourSchemes)
        if (!theirSchemes.has(id)) differences.push(`${name}: scheme ${id} not the reference's`);
      for (const id of theirSchemes) if (!ourSchemes.has(id)) unaccepted.add(id);
    }
    expect(differences).toEqual([]);
    expect([...unaccepted].sort()).toEqual([...KNOWN_UNACCEPTED_SCHEMES].sort());
  });
});
