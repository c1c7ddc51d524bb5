import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
// Loads every domain's module, and with them the components they name (see nameComponents).
import '../../src/localplane.ts';
import { decodedPath } from '../../src/journal/matching.ts';
import { openapiDocument } from '../../src/openapi/document.ts';

/**
 * Response bodies are validated against localplane's own OpenAPI document (generated from
 * its zod schemas) and, when LOCALPLANE_REFERENCE_OPENAPI names the hosted service's
 * reference document (`npm run check:reference`), against that one as well.
 */
const documents: Record<string, unknown> = { localplane: openapiDocument() };
const referencePath = process.env.LOCALPLANE_REFERENCE_OPENAPI;
if (referencePath) documents.reference = JSON.parse(readFileSync(referencePath, 'utf8'));

const newAjv = () => {
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
  (addFormats as unknown as typeof addFormats.default)(ajv);
  return ajv;
};
const ajv = newAjv();
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

/**
 * Asserts that a response body matches a component schema (`Name` or `Name[]`) of every document
 * in use, or of localplane's own only, for a body of a feature the reference predates.
 */
export function expectSchema(
  body: unknown,
  name: string,
  scope: 'every document' | 'localplane only' = 'every document',
): void {
  for (const document of scope === 'localplane only' ? ['localplane'] : Object.keys(documents)) {
    const validate = validator(document, name);
    const valid = validate(body);
    const problems = valid ? '' : `: ${ajv.errorsText(validate.errors)}`;
    expect(
      valid ? [] : validate.errors,
      `response matches ${name} of the ${document} OpenAPI document${problems}`,
    ).toEqual([]);
  }
}

// ---------------------------------------------------------------------------------------------
// Every response the suite sees, checked against the document the instance serves.

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

interface ServedDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** A JSON pointer's segment inside a URI fragment. */
const pointerSegment = (segment: string) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));

/**
 * Replies given below the app, whatever the route (see src/shared/http-server.ts): the
 * request could not be parsed, so no operation answered it.
 */
const SERVER_LEVEL_DETAILS = [
  'Invalid HTTP request received.',
  'Request Header Fields Too Large',
  'Content Too Large',
  'Request Timeout',
  'Expectation Failed',
];
const isServerLevelDetail = (detail: unknown) =>
  SERVER_LEVEL_DETAILS.some((start) => String(detail ?? '').startsWith(start));

class ResponseChecker {
  private readonly ajv = newAjv();
  private readonly validators = new Map<string, ReturnType<ReturnType<typeof newAjv>['compile']>>();
  private readonly templates: { template: string; pattern: RegExp; params: number }[];

  constructor(private readonly document: ServedDocument) {
    this.ajv.addSchema(document as object, 'served');
    this.templates = Object.keys(document.paths)
      .map((template) => ({
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      // A literal segment wins over a parameter: /destinations before /{bulk_export_id}.
      .sort((a, b) => a.params - b.params);
  }

  check(method: string, path: string, status: number, contentType: string, text: string): void {
    const template = this.templates.find((candidate) => candidate.pattern.test(path))?.template;
    const operation = template && this.document.paths[template]![method.toLowerCase()];
    // No operation answered: an unknown path (404), another method (405), a redirect (307).
    if (!operation) return;
    const what = `${method} ${path} -> ${status} ${text.slice(0, 300)}`;
    const declared = operation.responses[String(status)];
    if (!declared) {
      const detail = (parseJson(text) as { detail?: unknown } | null | undefined)?.detail;
      if (status >= 400 && isServerLevelDetail(detail)) return;
      throw new Error(
        `${what}: status ${status} is not in the served OpenAPI document for ${method} ${template} (it ` +
          `declares ${Object.keys(operation.responses).join(', ')})`,
      );
    }
    const schema = declared.content?.['application/json']?.schema;
    if (!schema) {
      if (!declared.content && text !== '')
        throw new Error(`${what}: the served OpenAPI document declares no body for ${method} ${template} ${status}`);
      return;
    }
    if (method === 'HEAD') return;
    if (!contentType.startsWith('application/json'))
      throw new Error(`${what}: content type ${contentType}, not JSON as the served OpenAPI document declares`);
    const ref =
      `served#/paths/${pointerSegment(template)}/${method.toLowerCase()}/responses/${status}` +
      `/content/${pointerSegment('application/json')}/schema`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    if (!validate(JSON.parse(text))) {
      throw new Error(
        `${what}: does not match the served OpenAPI document's schema ` +
          `for ${method} ${template} ${status}: ${this.ajv.errorsText(validate.errors)}`,
      );
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const checkers = new Map<string, Promise<ResponseChecker | null>>();
/**
 * Checkers by the text of the document they check against: every instance serves the same one, and compiling its
 * validators is most of a checker's cost.
 */
const checkersOfDocuments = new Map<string, ResponseChecker>();

async function checkerFor(origin: string): Promise<ResponseChecker | null> {
  const response = await fetch(`${origin}/openapi.json`);
  const text =
    response.ok && response.headers.get('content-type')?.startsWith('application/json') ? await response.text() : null;
  const document = text === null ? null : (parseJson(text) as ServedDocument | undefined);
  // Not a localplane API (the objstore answers there): nothing to check against.
  if (!document?.paths) return null;
  let checker = checkersOfDocuments.get(text!);
  if (!checker) {
    checker = new ResponseChecker(document);
    checkersOfDocuments.set(text!, checker);
  }
  return checker;
}

/**
 * The checker of the API at `origin` (null for another server), loaded once: fetched before a request goes out, it is
 * ready when the reply comes.
 */
export function servedChecker(origin: string): Promise<ResponseChecker | null> {
  let checker = checkers.get(origin);
  if (!checker) {
    checker = checkerFor(origin);
    checkers.set(origin, checker);
    // Unreachable (the instance is stopped or restarting): tried again with the next response.
    checker.catch(() => checkers.delete(origin));
  }
  return checker.catch(() => null);
}

/**
 * Throws (failing the test) when a response of a localplane API is not what its served
 * /openapi.json declares for the operation's method, path and status: a status it does not
 * declare, or a body that does not match the declared schema. An answer a fault rule forced
 * (it names the rule in X-Localplane-Fault-Rule) is the test's own, not the endpoint's.
 */
export async function checkServedResponse(
  url: string,
  method: string,
  status: number,
  contentType: string,
  text: string,
  faultRule: string | null,
): Promise<void> {
  if (faultRule !== null) return;
  let origin: string;
  let pathname: string;
  try {
    ({ origin, pathname } = new URL(url));
  } catch {
    return; // A target no URL holds: answered below the app, by no operation.
  }
  (await servedChecker(origin))?.check(method, decodedPath(pathname), status, contentType, text);
}
