/**
 * A bucket's CORS configuration (PutBucketCors): its rules read and checked as S3 checks them,
 * the rule that allows a browser's request, and the `Access-Control-*` headers of the answer.
 * The storage keeps the document (s3rver's `<bucket>/._S3rver_cors.xml`, in the layout it wrote,
 * which is read back the same way); operations/bucket-cors.ts answers the operations.
 */
import type { ObjstoreStorage } from '../storage/storage.ts';
import { errors, GatewayError } from '../s3-errors.ts';
import { isValidBucketName } from './target.ts';
import { childElements, parseRequestDocument, type XmlContent, type XmlElement } from './xml.ts';

export interface CorsRule {
  id: string | undefined;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds: string | undefined;
}

/** The methods a rule may allow. */
const CORS_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'HEAD']);

const LISTED = ['CORSRule', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'MaxAgeSeconds', 'ID'];

/** The texts of a rule's repeated element; MalformedXML for one that holds elements. */
function texts(rule: XmlElement, name: string): string[] {
  return childElements(rule, name).map((child) => {
    if (typeof child !== 'string') throw new GatewayError(errors.malformedXml());
    return child;
  });
}

function atMostOne(rule: XmlElement, name: string): string | undefined {
  const values = texts(rule, name);
  if (values.length > 1) throw new GatewayError(errors.malformedXml());
  return values[0];
}

function requireOneWildcardAtMost(element: string, values: readonly string[]): void {
  for (const value of values)
    if (value.split('*').length > 2) throw new GatewayError(errors.corsTwoWildcards(element, value));
}

/**
 * The rules of a CORSConfiguration document, in order; MalformedXML for a document that is not
 * one (no rule, a rule without an origin or a method), InvalidRequest for a method a rule may not
 * allow or a pattern with two wildcards. Values are trimmed.
 */
export function parseCorsConfiguration(document: string): CorsRule[] {
  const configuration = parseRequestDocument(document, 'CORSConfiguration', LISTED, { trim: true });
  const rules = childElements(configuration, 'CORSRule').map((rule): CorsRule => {
    if (typeof rule === 'string') throw new GatewayError(errors.malformedXml());
    return {
      id: atMostOne(rule, 'ID'),
      allowedOrigins: texts(rule, 'AllowedOrigin'),
      allowedMethods: texts(rule, 'AllowedMethod'),
      allowedHeaders: texts(rule, 'AllowedHeader'),
      exposeHeaders: texts(rule, 'ExposeHeader'),
      maxAgeSeconds: atMostOne(rule, 'MaxAgeSeconds'),
    };
  });
  for (const rule of rules) {
    requireOneWildcardAtMost('AllowedOrigin', rule.allowedOrigins);
    requireOneWildcardAtMost('AllowedHeader', rule.allowedHeaders);
  }
  if (rules.length === 0) throw new GatewayError(errors.malformedXml());
  for (const rule of rules) {
    if (!rule.allowedOrigins.some(Boolean) || !rule.allowedMethods.some(Boolean))
      throw new GatewayError(errors.malformedXml());
    if (rule.maxAgeSeconds !== undefined && !/^\d+$/.test(rule.maxAgeSeconds))
      throw new GatewayError(errors.malformedXml());
    const unsupported = rule.allowedMethods.find((method) => !CORS_METHODS.has(method));
    if (unsupported !== undefined) throw new GatewayError(errors.corsUnsupportedMethod(unsupported));
  }
  return rules;
}

/**
 * The content of a CORSConfiguration document holding `rules`, as GetBucketCors answers it and the storage keeps it.
 */
export function corsConfigurationContent(rules: readonly CorsRule[]): XmlContent {
  return {
    CORSRule: rules.map((rule) => ({
      ID: rule.id,
      AllowedHeader: rule.allowedHeaders,
      AllowedMethod: rule.allowedMethods,
      AllowedOrigin: rule.allowedOrigins,
      ExposeHeader: rule.exposeHeaders,
      MaxAgeSeconds: rule.maxAgeSeconds,
    })),
  };
}

/**
 * The rules of the bucket's CORS configuration; null when it has none, is not a bucket (or no
 * name a bucket could have), or its stored document cannot be read as one.
 */
export async function corsRulesOf(storage: ObjstoreStorage, bucket: string): Promise<CorsRule[] | null> {
  if (!isValidBucketName(bucket)) return null;
  const document = await storage.bucketCors(bucket);
  if (document === null) return null;
  try {
    return parseCorsConfiguration(document);
  } catch {
    return null;
  }
}

/** `*` in a pattern stands for any text; the rest is matched as it is (AllowedHeader in any case). */
function wildcardPattern(pattern: string, flags = ''): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    flags,
  );
}

/** The first rule allowing `origin` to send `method` and, when given, every header of `requestHeaders` (lower case). */
export function matchCorsRule(
  rules: readonly CorsRule[],
  origin: string,
  method: string,
  requestHeaders: readonly string[] = [],
): CorsRule | undefined {
  return rules.find(
    (rule) =>
      rule.allowedOrigins.some((pattern) => wildcardPattern(pattern).test(origin)) &&
      rule.allowedMethods.includes(method.toUpperCase()) &&
      requestHeaders.every((header) =>
        rule.allowedHeaders.some((pattern) => wildcardPattern(pattern, 'i').test(header)),
      ),
  );
}

/** The `Access-Control-*` headers of an answer to `origin` that `rule` allows. */
export function corsHeaders(rule: CorsRule, origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': rule.allowedOrigins.includes('*') ? '*' : origin,
    'Access-Control-Allow-Methods': rule.allowedMethods.join(', '),
    ...(rule.exposeHeaders.length > 0 ? { 'Access-Control-Expose-Headers': rule.exposeHeaders.join(', ') } : {}),
    ...(rule.maxAgeSeconds === undefined ? {} : { 'Access-Control-Max-Age': rule.maxAgeSeconds }),
    'Access-Control-Allow-Credentials': 'true',
    Vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
}
