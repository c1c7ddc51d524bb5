/** Runs tasks one at a time per name, in the order they arrive. */
export class TurnTaking {
  private readonly lastTurn = new Map<string, Promise<void>>();

  async run(name: string, task: () => Promise<void>): Promise<void> {
    const previous = this.lastTurn.get(name) ?? Promise.resolve();
    const turn = previous.then(task);
    const settled = turn.catch(() => {});
    this.lastTurn.set(name, settled);
    try {
      await turn;
    } finally {
      if (this.lastTurn.get(name) === settled) this.lastTurn.delete(name);
    }
  }
}
