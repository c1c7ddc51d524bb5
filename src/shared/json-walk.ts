/**
 * Walks over JSON with explicit stacks, never recursion: JSON.parse reads any nesting (V8's
 * parser keeps no call stack per level), so a recorded or journaled body can be 100,000 levels
 * deep, and a recursive walk, JSON.stringify's too, runs out of stack a few thousand levels down.
 */

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => value !== null && typeof value === 'object';

/** An object's fields or an array's items, as [key, value] pairs (a null key for an item). */
const childrenOf = (container: Container): [string | null, unknown][] =>
  Array.isArray(container) ? container.map((item) => [null, item]) : Object.entries(container);

/** Puts items on a stack so that they come off it in their order. */
export function pushInOrder<T>(stack: T[], items: readonly T[]): void {
  for (let index = items.length - 1; index >= 0; index--) stack.push(items[index]!);
}

/** Every string in a JSON value, object keys included, in the order the text has them. */
export function* stringsOf(value: unknown): Generator<string> {
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      yield next;
    } else if (isContainer(next)) {
      pushInOrder(
        pending,
        childrenOf(next).flatMap(([key, child]) => (key === null ? [child] : [key, child])),
      );
    }
  }
}

/**
 * What a copy puts in a value's place instead of copying it: `{ value }`, or undefined to copy it (walking into it).
 */
export type Replacement = (value: unknown, key: string | null) => { value: unknown } | undefined;

/** Sets a field as Object.fromEntries does: an own property, a `__proto__` key included. */
const put = (target: Container, key: string | number, value: unknown) =>
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });

/**
 * A copy of a JSON value, with what `replace` gives in place of the values it takes (each value is
 * offered to it, with the key of its field, before it is walked into) and each key renamed by `renameKey`.
 */
export function copyJson(
  value: unknown,
  replace: Replacement,
  renameKey: (key: string) => string = (key) => key,
): unknown {
  const root: unknown[] = [undefined];
  type Step = { target: Container; at: string | number; value: unknown; key: string | null };
  const pending: Step[] = [{ target: root, at: 0, value, key: null }];
  while (pending.length > 0) {
    const { target, at, value: next, key } = pending.pop()!;
    const replaced = replace(next, key);
    if (replaced !== undefined || !isContainer(next)) {
      put(target, at, replaced === undefined ? next : replaced.value);
      continue;
    }
    const copy: Container = Array.isArray(next) ? new Array(next.length) : {};
    put(target, at, copy);
    const children = childrenOf(next);
    const places = children.map(([field], index) => (field === null ? index : renameKey(field)));
    // Laid out in order, filled in order: of two keys renamed alike, the later one's value stays (as with
    // Object.fromEntries).
    for (const place of places) if (typeof place === 'string') put(copy, place, undefined);
    pushInOrder(
      pending,
      children.map(([field, child], index): Step => ({ target: copy, at: places[index]!, value: child, key: field })),
    );
  }
  return root[0];
}

/** A scalar as JSON.stringify writes it; undefined for what JSON has no text for (undefined, functions). */
const scalarText = (value: unknown): string | undefined => JSON.stringify(value);

/**
 * JSON.stringify(value) for JSON data (what JSON.parse gives, and undefined fields, which are left out), at any depth.
 */
export function jsonText(value: unknown): string | undefined {
  if (!isContainer(value)) return scalarText(value);
  const parts: string[] = [];
  const open: { children: [string | null, unknown][]; next: number; array: boolean }[] = [];
  const enter = (container: Container) => {
    const array = Array.isArray(container);
    parts.push(array ? '[' : '{');
    const children = childrenOf(container);
    // JSON.stringify leaves out the fields it has no text for, and writes null for such items.
    const written = array
      ? children
      : children.filter(([, child]) => isContainer(child) || scalarText(child) !== undefined);
    open.push({ array, next: 0, children: written });
  };
  enter(value);
  while (open.length > 0) {
    const frame = open.at(-1)!;
    if (frame.next === frame.children.length) {
      parts.push(frame.array ? ']' : '}');
      open.pop();
      continue;
    }
    const [key, child] = frame.children[frame.next++]!;
    if (frame.next > 1) parts.push(',');
    if (key !== null) parts.push(JSON.stringify(key), ':');
    if (isContainer(child)) enter(child);
    else parts.push(scalarText(child) ?? 'null');
  }
  return parts.join('');
}

/** How deep arrays and objects nest in a JSON value: 0 for a scalar, 1 for `[]` or `{"a": 1}`. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop()!;
    if (!isContainer(next)) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const [, child] of childrenOf(next)) pending.push([child, depth + 1]);
  }
  return deepest;
}
