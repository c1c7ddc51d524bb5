/**
 * The `Range` header of GetObject / HeadObject, read as S3 reads it: one byte range (`bytes=a-b`,
 * open-ended `bytes=a-`, suffix `bytes=-n`) is served as 206; a header S3 cannot parse, or one
 * asking for several ranges, is ignored and the whole object served as 200; a range that starts
 * past the end of the object (or an empty suffix, `bytes=-0`) is 416 InvalidRange.
 */

import type { ByteRange } from '../../storage/storage.ts';

export type RangeRequest =
  /** No range applies: serve the whole object. */
  { kind: 'whole' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/;

/** How a GetObject / HeadObject's Range header applies to an object of `size` bytes. */
export function readRangeRequest(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  const parts = SINGLE_RANGE.exec(header.trim());
  if (!parts) return { kind: 'whole' };
  const [, first, last] = parts as unknown as [string, string, string];
  if (first === '' && last === '') return { kind: 'whole' };

  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', range: { start, end: Math.min(end, size - 1) } };
}

export function contentRange({ start, end }: ByteRange, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}
