import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError } from '../../src/shared/json-text.ts';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('the request JSON check', () => {
  it('accepts exactly what JSON.parse reads, short of the depth limit', () => {
    const piece = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'u',
      '0',
      '1',
      '-',
      '.',
      'e',
      '+',
      ' ',
      '\n',
      'a',
      'true',
      'null',
      'fals',
      '"a"',
      '\\u12',
      'd800',
      '\u0001',
      '😀',
    );
    const damagedJson = fc
      .tuple(fc.json({ depthSize: 'small' }), fc.nat(), piece)
      .map(
        ([text, at, inserted]) => text.slice(0, at % (text.length + 1)) + inserted + text.slice(at % (text.length + 1)),
      );
    const texts = fc.oneof(
      fc.json(),
      damagedJson,
      fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join('')),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const error = findJsonSyntaxError(text, 1000);
        expect(error === null).toBe(parses(text));
        if (error) expect(error.position).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 20_000, seed: 7 },
    );
  });

  // Python's json module says the same of each (checked against CPython 3.11).
  const pythonSays: [text: string, message: string, position: number][] = [
    ['[1,', 'Expecting value', 3],
    ['{', 'Expecting property name enclosed in double quotes', 1],
    ['{"a"', "Expecting ':' delimiter", 4],
    ['{"a":1', "Expecting ',' delimiter", 6],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes', 7],
    ['[1,]', 'Expecting value', 3],
    ['"abc', 'Unterminated string starting at', 0],
    ['"a\\x"', 'Invalid \\escape', 2],
    ['"a\\u12"', 'Invalid \\uXXXX escape', 3],
    ['"a\nb"', 'Invalid control character at', 2],
    ['01', 'Extra data', 1],
    ['1e+', 'Extra data', 1],
    ['-', 'Expecting value', 0],
    ['  ', 'Expecting value', 2],
    ['"😀" x', 'Extra data', 4],
  ];
  it.each(pythonSays)('reports %j as Python does', (text, message, position) => {
    expect(findJsonSyntaxError(text)).toEqual({ message, position });
  });

  it('refuses NaN and Infinity, which Python reads but JSON.parse does not', () => {
    expect(findJsonSyntaxError('[NaN, Infinity]')).toEqual({ message: 'Expecting value', position: 1 });
  });

  it('stops at the depth limit without recursing, whatever the depth', () => {
    expect(findJsonSyntaxError('['.repeat(64) + ']'.repeat(64))).toBeNull();
    expect(findJsonSyntaxError('['.repeat(65) + ']'.repeat(65))).toEqual({
      message: 'Nesting deeper than 64 levels',
      position: 64,
    });
    expect(findJsonSyntaxError('{"a":'.repeat(1_000_000))).toEqual({
      message: 'Nesting deeper than 64 levels',
      position: 320,
    });
  });
});
