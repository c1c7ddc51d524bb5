import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const specPath = fileURLToPath(new URL('../../../shared/spec/reference-openapi.json', import.meta.url));
const document = JSON.parse(readFileSync(specPath, 'utf8'));

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);
ajv.addSchema(document, 'reference');

const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validator(name: string) {
  let validate = validators.get(name);
  if (!validate) {
    const isArray = name.endsWith('[]');
    const ref = { $ref: `reference#/components/schemas/${isArray ? name.slice(0, -2) : name}` };
    validate = ajv.compile(isArray ? { type: 'array', items: ref } : ref);
    validators.set(name, validate);
  }
  return validate;
}

/** Asserts that a response body matches a schema of reference-openapi.json (`Name` or `Name[]`). */
export function expectSchema(body: unknown, name: string): void {
  const validate = validator(name);
  const valid = validate(body);
  expect(valid ? [] : validate.errors, `response matches ${name}`).toEqual([]);
}
