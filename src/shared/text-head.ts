/** The last text whose head was copied, and the copy: an answer served from a cache is the same string each time. */
let lastText = '';
let lastLength = 0;
let lastHead = '';

/**
 * The first `length` characters of `text`, as a string of their own. V8 makes a slice of a
 * string a view that keeps the whole string alive: a kept head of a 1 MiB body would hold the
 * megabyte for as long as the head is kept. A structured clone copies the characters out, once
 * for a text given again (a cached answer), so that journalling it allocates nothing more.
 */
export function textHead(text: string, length: number): string {
  if (text.length <= length) return text;
  if (text !== lastText || length !== lastLength) {
    lastHead = structuredClone(text.slice(0, length));
    lastText = text;
    lastLength = length;
  }
  return lastHead;
}
