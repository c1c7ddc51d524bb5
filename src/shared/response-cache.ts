/**
 * Serialized response bodies by key (a workspace and a query string), valid until the next
 * write to the database: a hot read answers from here without querying or serializing again.
 */
export class ResponseCache {
  private bodies = new Map<string, string>();
  private validAt = -1;

  constructor(
    private readonly writeCount: () => number,
    private readonly capacity = 1024,
  ) {}

  get(key: string): string | undefined {
    const writes = this.writeCount();
    if (writes !== this.validAt) {
      this.bodies.clear();
      this.validAt = writes;
    }
    return this.bodies.get(key);
  }

  /** Stores a body computed after the `get` that missed (no write can have happened in between: handlers are synchronous). */
  set(key: string, body: string): void {
    if (this.bodies.size >= this.capacity) this.bodies.clear();
    this.bodies.set(key, body);
  }
}
