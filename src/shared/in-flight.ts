/** Work under way (promises that never reject), and a wait for all of it, what starts meanwhile included. */
export class InFlight {
  private readonly pending = new Set<Promise<unknown>>();

  track(work: Promise<unknown>): void {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }
}
