/** Arrays and objects nest at most this deep in a request body; deeper is a 422 before parsing. */
export const MAX_JSON_DEPTH = 64;

/** Where and why JSON text is malformed, in the words and positions of Python's json module. */
export interface JsonSyntaxError {
  /** Index in code points, as Python counts. */
  position: number;
  message: string;
}

const enum Expect {
  Value,
  Key,
  AfterValue,
}

const OBJECT = 1;
const ARRAY = 2;

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;
const SIMPLE_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

class Malformed extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/** The index after the string literal that opens at `start`. */
function skipString(text: string, start: number): number {
  for (let index = start + 1; ;) {
    if (index >= text.length) throw new Malformed(start, 'Unterminated string starting at');
    const code = text.charCodeAt(index);
    if (code === 0x22) return index + 1;
    if (code === 0x5c) {
      const escape = text[index + 1];
      if (escape === undefined) throw new Malformed(start, 'Unterminated string starting at');
      if (escape === 'u') {
        HEX4.lastIndex = index + 2;
        // Python wants a character after the four digits, as the closing quote must follow.
        if (index + 6 >= text.length || !HEX4.test(text)) throw new Malformed(index + 1, 'Invalid \\uXXXX escape');
        index += 6;
      } else {
        if (!SIMPLE_ESCAPES.has(escape)) throw new Malformed(index, 'Invalid \\escape');
        index += 2;
      }
    } else if (code < 0x20) {
      throw new Malformed(index, 'Invalid control character at');
    } else {
      index++;
    }
  }
}

/** The index after the literal or number at `index`, or -1 when none starts there. */
function skipScalar(text: string, index: number): number {
  for (const literal of ['null', 'true', 'false']) {
    if (text.startsWith(literal, index)) return index + literal.length;
  }
  NUMBER.lastIndex = index;
  return NUMBER.test(text) ? NUMBER.lastIndex : -1;
}

/**
 * Checks request JSON text without recursion, so that any nesting is safe to look at:
 * the first syntax error, or nesting deeper than `maxDepth`, or null when JSON.parse
 * will read it. Messages are Python's (the real service's `ctx.error`), never a snippet
 * of the text, which may hold secrets.
 */
export function findJsonSyntaxError(text: string, maxDepth = MAX_JSON_DEPTH): JsonSyntaxError | null {
  const open: number[] = [];
  const skipWhitespace = (from: number) => {
    let index = from;
    while (isWhitespace(text.charCodeAt(index))) index++;
    return index;
  };
  const enter = (index: number, kind: number) => {
    if (open.length >= maxDepth) throw new Malformed(index, `Nesting deeper than ${maxDepth} levels`);
    open.push(kind);
  };
  try {
    let index = skipWhitespace(0);
    let expect = Expect.Value;
    for (;;) {
      if (expect === Expect.Value) {
        const code = text.charCodeAt(index);
        if (code === 0x7b || code === 0x5b) {
          const isObject = code === 0x7b;
          enter(index, isObject ? OBJECT : ARRAY);
          index = skipWhitespace(index + 1);
          if (text.charCodeAt(index) === (isObject ? 0x7d : 0x5d)) {
            open.pop();
            index++;
            expect = Expect.AfterValue;
          } else {
            expect = isObject ? Expect.Key : Expect.Value;
          }
          continue;
        }
        const end = code === 0x22 ? skipString(text, index) : skipScalar(text, index);
        if (end === -1) throw new Malformed(index, 'Expecting value');
        index = end;
        expect = Expect.AfterValue;
      } else if (expect === Expect.Key) {
        if (text.charCodeAt(index) !== 0x22)
          throw new Malformed(index, 'Expecting property name enclosed in double quotes');
        index = skipWhitespace(skipString(text, index));
        if (text.charCodeAt(index) !== 0x3a) throw new Malformed(index, "Expecting ':' delimiter");
        index = skipWhitespace(index + 1);
        expect = Expect.Value;
      } else {
        index = skipWhitespace(index);
        const kind = open.at(-1);
        if (kind === undefined) {
          if (index !== text.length) throw new Malformed(index, 'Extra data');
          return null;
        }
        const code = text.charCodeAt(index);
        if (code === (kind === OBJECT ? 0x7d : 0x5d)) {
          open.pop();
          index++;
        } else if (code === 0x2c) {
          index = skipWhitespace(index + 1);
          expect = kind === OBJECT ? Expect.Key : Expect.Value;
        } else {
          throw new Malformed(index, "Expecting ',' delimiter");
        }
      }
    }
  } catch (error) {
    if (!(error instanceof Malformed)) throw error;
    return { position: codePointCount(text, error.index), message: error.message };
  }
}

function codePointCount(text: string, end: number): number {
  let count = 0;
  for (let index = 0; index < end; index++, count++) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < end) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
  }
  return count;
}
