/**
 * Runs at most `limit` tasks at once, the others waiting their turn in the order they were
 * given. For work that holds a scarce resource while it runs (open file descriptors): a fan-out
 * over thousands of items takes its turns instead of acquiring them all at once.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      // The turn passes straight to the next waiting task, so `running` never drops in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** `task` for every item, in turns; the results in the items' order. */
  map<Item, Result>(items: readonly Item[], task: (item: Item) => Promise<Result>): Promise<Result[]> {
    return Promise.all(items.map((item) => this.run(() => task(item))));
  }
}
