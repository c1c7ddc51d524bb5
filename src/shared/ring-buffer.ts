/** Bounded buffer of the most recent items; the oldest are dropped first. */
export class RingBuffer<Item> {
  private readonly capacity: number;
  private readonly items: Item[] = [];
  /** Index of the oldest item once the buffer is full. */
  private start = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.capacity = capacity;
  }

  get length(): number {
    return this.items.length;
  }

  push(item: Item): void {
    if (this.items.length < this.capacity) {
      this.items.push(item);
    } else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** The item at `index` from the oldest (0) to the newest (length - 1). */
  at(index: number): Item {
    return this.items[(this.start + index) % this.items.length]!;
  }

  clear(): void {
    this.items.length = 0;
    this.start = 0;
  }
}
