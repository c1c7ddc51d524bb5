import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { openapiDocument } from '../../src/openapi/document.ts';

/**
 * Response bodies are validated against localplane's own OpenAPI document (generated from
 * its zod schemas) and, when LOCALPLANE_REFERENCE_OPENAPI names the hosted service's
 * reference document (`npm run check:reference`), against that one as well.
 */
const documents: Record<string, unknown> = { localplane: openapiDocument() };
const referencePath = process.env.LOCALPLANE_REFERENCE_OPENAPI;
if (referencePath) documents.reference = JSON.parse(readFileSync(referencePath, 'utf8'));

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);
for (const [name, document] of Object.entries(documents)) ajv.addSchema(document as object, name);

const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validator(document: string, name: string) {
  const key = `${document}:${name}`;
  let validate = validators.get(key);
  if (!validate) {
    const isArray = name.endsWith('[]');
    const ref = { $ref: `${document}#/components/schemas/${isArray ? name.slice(0, -2) : name}` };
    validate = ajv.compile(isArray ? { type: 'array', items: ref } : ref);
    validators.set(key, validate);
  }
  return validate;
}

/** Asserts that a response body matches a component schema (`Name` or `Name[]`) of every document in use. */
export function expectSchema(body: unknown, name: string): void {
  for (const document of Object.keys(documents)) {
    const validate = validator(document, name);
    const valid = validate(body);
    const problems = valid ? '' : `: ${ajv.errorsText(validate.errors)}`;
    expect(valid ? [] : validate.errors, `response matches ${name} of the ${document} OpenAPI document${problems}`).toEqual([]);
  }
}
