import type { ObjstoreRequestRecord } from './types.ts';

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

/** Bounded ring buffer of request records; the oldest are dropped first. */
export class RequestJournal {
  private readonly capacity: number;
  private readonly items: ObjstoreRequestRecord[] = [];
  /** Index of the oldest record once the buffer is full. */
  private start = 0;

  constructor(capacity = DEFAULT_JOURNAL_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('journal capacity must be a positive integer');
    this.capacity = capacity;
  }

  push(record: ObjstoreRequestRecord): void {
    const frozen = Object.freeze({ ...record });
    if (this.items.length < this.capacity) {
      this.items.push(frozen);
    } else {
      this.items[this.start] = frozen;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** A snapshot, oldest first and newest last. */
  snapshot(): readonly ObjstoreRequestRecord[] {
    return Object.freeze([...this.items.slice(this.start), ...this.items.slice(0, this.start)]);
  }

  clear(): void {
    this.items.length = 0;
    this.start = 0;
  }
}
