/**
 * The first `length` characters of `text`, as a string of their own. V8 makes a slice of a
 * string a view that keeps the whole string alive: a kept head of a 1 MiB body would hold the
 * megabyte for as long as the head is kept. A structured clone copies the characters out.
 */
export function textHead(text: string, length: number): string {
  return text.length <= length ? text : structuredClone(text.slice(0, length));
}
