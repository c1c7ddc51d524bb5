/**
 * Values by key, valid until the next write to the database: serialized response values (a hot
 * read answers without querying or serializing again), the workspace of an API key.
 */
export class WriteScopedCache<V> {
  private values = new Map<string, V>();
  private validAt = -1;

  constructor(
    private readonly writeCount: () => number,
    private readonly capacity = 1024,
  ) {}

  get(key: string): V | undefined {
    const writes = this.writeCount();
    if (writes !== this.validAt) {
      this.values.clear();
      this.validAt = writes;
    }
    return this.values.get(key);
  }

  /**
   * Stores a value computed after the `get` that missed (no write can have happened in between: handlers are
   * synchronous).
   */
  set(key: string, value: V): void {
    if (this.values.size >= this.capacity) this.values.clear();
    this.values.set(key, value);
  }
}
