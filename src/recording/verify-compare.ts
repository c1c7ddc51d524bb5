/**
 * How `verify` compares a recorded answer with localplane's: status, media type, the body's
 * shape (fields and JSON types, values ignored, null compatible with any type), and a 422's
 * `type` and `loc` per error. Each difference reads `<where>: <recorded> → <here>`.
 */
import { jsonText, pushInOrder } from '../shared/json-walk.ts';

/** An answer as compared: its body parsed as JSON, undefined when there is none or it is not JSON. */
export interface ComparedAnswer {
  status: number;
  /** The Content-Type as answered ('' when none): compared as its media type, without parameters. */
  contentType: string;
  body: unknown;
  /** False when the recording has no copy of the body (a HAR may leave it out): the body is then not compared. */
  bodyKept: boolean;
}

export interface Difference {
  /** `status`, `content type`, or a place in the body such as `body.resources[].name`. */
  at: string;
  /** What the recording shows there, `missing` when it has no such field. */
  recorded: string;
  /** What localplane answered there, `missing` when it has no such field. */
  here: string;
}

export const MISSING = 'missing';

/** `body.name: missing`, `body.extra: extra`, `status 200 → 404`, `body.count: number → string`. */
export function describeDifference({ at, recorded, here }: Difference): string {
  if (here === MISSING) return `${at}: missing`;
  if (recorded === MISSING) return `${at}: extra`;
  return at === 'status' ? `status ${recorded} → ${here}` : `${at}: ${recorded} → ${here}`;
}

type JsonType = 'boolean' | 'number' | 'string' | 'object' | 'array';

/** The shape of a value, or of every element of a list merged: its types (null left out), its fields, its elements. */
interface Shape {
  types: Set<JsonType>;
  fields: Map<string, Shape>;
  /** Null while no element was seen. */
  elements: Shape | null;
}

const emptyShape = (): Shape => ({ types: new Set(), fields: new Map(), elements: null });

/** The shape of a value, its lists' elements merged, each field and element walked in the order the value has them. */
function shapeOf(value: unknown): Shape {
  const root = emptyShape();
  const pending: [Shape, unknown][] = [[root, value]];
  while (pending.length > 0) {
    const [shape, next] = pending.pop()!;
    if (next === null || next === undefined) continue;
    const children: [Shape, unknown][] = [];
    if (Array.isArray(next)) {
      shape.types.add('array');
      for (const element of next) children.push([(shape.elements ??= emptyShape()), element]);
    } else if (typeof next === 'object') {
      shape.types.add('object');
      for (const [key, field] of Object.entries(next)) {
        if (!shape.fields.has(key)) shape.fields.set(key, emptyShape());
        children.push([shape.fields.get(key)!, field]);
      }
    } else {
      shape.types.add(typeof next as JsonType);
    }
    // In order: the fields' order is the order their differences are reported in.
    pushInOrder(pending, children);
  }
  return root;
}

const fieldPath = (at: string, key: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
const typeNames = (types: Set<JsonType>) => [...types].sort().join('|');
/** A field's types, `null` when it was only ever null, `missing` when there is no such field. */
const typeNamesOf = (field: Shape | undefined) => (field ? typeNames(field.types) || 'null' : MISSING);

/** The differences between two shapes, in the order of their fields, each field's own before the next field's. */
function compareShapes(recordedBody: Shape, hereBody: Shape, differences: Difference[]): void {
  // A difference found, or two shapes still to compare at a place.
  type Step = Difference | { at: string; shapes: [recorded: Shape, here: Shape] };
  const pending: Step[] = [{ at: 'body', shapes: [recordedBody, hereBody] }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    if (!('shapes' in step)) {
      differences.push(step);
      continue;
    }
    const { at, shapes } = step;
    const [recorded, here] = shapes;
    // A value seen only as null says nothing of its type.
    if (recorded.types.size === 0 || here.types.size === 0) continue;
    if (typeNames(recorded.types) !== typeNames(here.types)) {
      differences.push({ at, recorded: typeNames(recorded.types), here: typeNames(here.types) });
      continue;
    }
    const next: Step[] = [];
    for (const key of new Set([...recorded.fields.keys(), ...here.fields.keys()])) {
      const recordedField = recorded.fields.get(key);
      const hereField = here.fields.get(key);
      if (recordedField && hereField) next.push({ at: fieldPath(at, key), shapes: [recordedField, hereField] });
      else next.push({ at: fieldPath(at, key), recorded: typeNamesOf(recordedField), here: typeNamesOf(hereField) });
    }
    // An empty list on either side matches any list.
    if (recorded.elements && here.elements) next.push({ at: `${at}[]`, shapes: [recorded.elements, here.elements] });
    pushInOrder(pending, next);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const errorCount = (count: number) => `${count} error${count === 1 ? '' : 's'}`;

/** A FastAPI 422's errors, compared one by one by `type` and `loc`, which clients read. */
function compareValidationErrors(recorded: unknown, here: unknown, differences: Difference[]): void {
  if (!isRecord(recorded) || !isRecord(here) || !Array.isArray(recorded.detail) || !Array.isArray(here.detail)) return;
  const [recordedErrors, hereErrors] = [recorded.detail, here.detail];
  if (recordedErrors.length !== hereErrors.length) {
    differences.push({
      at: 'body.detail',
      recorded: errorCount(recordedErrors.length),
      here: errorCount(hereErrors.length),
    });
  }
  for (let index = 0; index < Math.min(recordedErrors.length, hereErrors.length); index++) {
    for (const field of ['type', 'loc']) {
      const [recordedValue, hereValue] = [recordedErrors, hereErrors].map((errors) => jsonText(errors[index]?.[field]));
      if (recordedValue !== hereValue)
        differences.push({
          at: `body.detail[${index}].${field}`,
          recorded: recordedValue ?? MISSING,
          here: hereValue ?? MISSING,
        });
    }
  }
}

const bodyKind = (body: unknown) => (body === undefined ? 'no JSON body' : 'JSON');
const mediaTypeOf = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** What differs between a recorded answer and localplane's; a different status says it all. */
export function compareAnswers(recorded: ComparedAnswer, here: ComparedAnswer): Difference[] {
  if (recorded.status !== here.status)
    return [{ at: 'status', recorded: String(recorded.status), here: String(here.status) }];
  const differences: Difference[] = [];
  const [recordedType, hereType] = [mediaTypeOf(recorded.contentType), mediaTypeOf(here.contentType)];
  if (recordedType !== hereType)
    differences.push({ at: 'content type', recorded: recordedType || 'none', here: hereType || 'none' });
  if (!recorded.bodyKept) return differences;
  if ((recorded.body === undefined) !== (here.body === undefined)) {
    differences.push({ at: 'body', recorded: bodyKind(recorded.body), here: bodyKind(here.body) });
    return differences;
  }
  compareShapes(shapeOf(recorded.body), shapeOf(here.body), differences);
  if (recorded.status === 422) compareValidationErrors(recorded.body, here.body, differences);
  return differences;
}
