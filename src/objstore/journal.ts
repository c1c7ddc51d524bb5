import { RingBuffer } from '../shared/ring-buffer.ts';
import type { ObjstoreRequestRecord } from './types.ts';

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

/** Bounded ring buffer of request records; the oldest are dropped first. */
export class ObjstoreJournal extends RingBuffer<ObjstoreRequestRecord> {
  constructor(capacity = DEFAULT_JOURNAL_CAPACITY) {
    super(capacity);
  }

  override push(record: ObjstoreRequestRecord): void {
    super.push(Object.freeze({ ...record }));
  }
}
