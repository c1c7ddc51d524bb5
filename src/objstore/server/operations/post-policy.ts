/**
 * The policy document of a browser form upload (POST object), as S3 reads and applies it: a
 * base64 JSON `{"expiration": ..., "conditions": [...]}` whose conditions every form field must
 * meet (exact `{"field": value}` / `["eq", "$field", value]`, `["starts-with", "$field", prefix]`,
 * `["content-length-range", min, max]`), and which must name every field the form sends.
 */
import { errors, GatewayError } from '../../s3-errors.ts';

/** The form's fields by lower-case name (S3 reads field names case-insensitively), the file apart. */
export type FormFields = ReadonlyMap<string, string>;

type Condition =
  | { kind: 'eq' | 'starts-with'; field: string; value: string; text: string }
  | { kind: 'content-length-range'; min: number; max: number };

export interface PostPolicy {
  expiration: Date;
  conditions: Condition[];
}

/** Fields that need no condition: the signature, the policy itself, the file and `x-ignore-*`. */
const UNCONDITIONED_FIELDS = new Set(['x-amz-signature', 'policy', 'file']);

const invalid = (problem: string) => new GatewayError(errors.invalidPolicy(problem));

function parseCondition(condition: unknown): Condition {
  if (Array.isArray(condition)) {
    const [operator, first, second] = condition as unknown[];
    const name = typeof operator === 'string' ? operator.toLowerCase() : '';
    if (name === 'content-length-range' && condition.length === 3) {
      const min = Number(first);
      const max = Number(second);
      if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) {
        throw invalid('Invalid content-length-range condition.');
      }
      return { kind: 'content-length-range', min, max };
    }
    if (
      (name === 'eq' || name === 'starts-with') &&
      condition.length === 3 &&
      typeof first === 'string' &&
      first.startsWith('$')
    ) {
      if (typeof second !== 'string') throw invalid(`Condition value must be a string: ${JSON.stringify(condition)}`);
      return {
        kind: name,
        field: first.slice(1).toLowerCase(),
        value: second,
        text: `["${name}", "${first}", "${second}"]`,
      };
    }
    throw invalid(`Invalid condition: ${JSON.stringify(condition)}`);
  }
  if (condition !== null && typeof condition === 'object') {
    const entries = Object.entries(condition);
    const [entry] = entries;
    if (entries.length !== 1 || typeof entry![1] !== 'string')
      throw invalid(`Invalid simple condition: ${JSON.stringify(condition)}`);
    const [field, value] = entry as [string, string];
    return { kind: 'eq', field: field.toLowerCase(), value, text: `["eq", "$${field}", "${value}"]` };
  }
  throw invalid(`Invalid condition: ${JSON.stringify(condition)}`);
}

/** Decodes and parses the base64 `policy` field; InvalidPolicyDocument when it is not a policy. */
export function parsePolicy(base64: string): PostPolicy {
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    throw invalid('Invalid JSON.');
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw invalid('Invalid JSON.');
  const { expiration, conditions } = document as { expiration?: unknown; conditions?: unknown };
  if (expiration === undefined) throw invalid('Policy missing expiration.');
  const expiresAt = typeof expiration === 'string' ? new Date(expiration) : new Date(NaN);
  if (Number.isNaN(expiresAt.getTime())) throw invalid(`Invalid 'expiration' value: '${String(expiration)}'`);
  if (conditions === undefined) throw invalid('Policy missing conditions.');
  if (!Array.isArray(conditions)) throw invalid('Policy conditions must be a list.');
  return { expiration: expiresAt, conditions: conditions.map(parseCondition) };
}

/**
 * Throws S3's AccessDenied when the policy has expired, a field fails its condition, or the form
 * sends a field the policy does not name. `fields` includes `bucket`, which the policy must name.
 */
export function requireFieldsAllowed(policy: PostPolicy, fields: FormFields, now: Date): void {
  if (now.getTime() > policy.expiration.getTime()) throw new GatewayError(errors.deniedByPolicy('Policy expired.'));
  const named = new Set<string>();
  for (const condition of policy.conditions) {
    if (condition.kind === 'content-length-range') continue;
    named.add(condition.field);
    const value = fields.get(condition.field) ?? '';
    const met = condition.kind === 'eq' ? value === condition.value : value.startsWith(condition.value);
    if (!met) throw new GatewayError(errors.deniedByPolicy(`Policy Condition failed: ${condition.text}`));
  }
  const extra = [...fields.keys()].filter(
    (name) => !named.has(name) && !UNCONDITIONED_FIELDS.has(name) && !name.startsWith('x-ignore-'),
  );
  if (extra.length > 0) throw new GatewayError(errors.deniedByPolicy(`Extra input fields: ${extra.join(', ')}`));
}

/** The largest file every content-length-range allows, within `limit`. */
export function maxContentLength(policy: PostPolicy, limit: number): number {
  return policy.conditions.reduce(
    (max, condition) => (condition.kind === 'content-length-range' ? Math.min(max, condition.max) : max),
    limit,
  );
}

/** Throws EntityTooSmall / EntityTooLarge unless the file's size is within every content-length-range. */
export function requireContentLengthInRange(policy: PostPolicy, size: number): void {
  for (const condition of policy.conditions) {
    if (condition.kind !== 'content-length-range') continue;
    if (size < condition.min) throw new GatewayError(errors.formTooSmall(size, condition.min));
    if (size > condition.max) throw new GatewayError(errors.formTooLarge(size, condition.max));
  }
}
