/**
 * What a component does when the instance is reset, in three phases run in turn over every
 * component (each phase in registration order): `stop` ends work in flight, `reset` puts the
 * state back to the seed, `resume` starts again the work that state implies. The `*Workspace`
 * hooks do the same for one workspace's resources; a component without them has no
 * per-workspace state and is left as it is.
 */
export interface ResetPart {
  /** A restored snapshot replaces this component's whole state, so a restore skips its reset. */
  inSnapshots?: boolean;
  stop?(): void | Promise<void>;
  reset?(): void | Promise<void>;
  resume?(): void | Promise<void>;
  stopWorkspace?(workspaceId: string): void | Promise<void>;
  resetWorkspace?(workspaceId: string): void | Promise<void>;
  resumeWorkspace?(workspaceId: string): void | Promise<void>;
}

/** The instance's resets: every component registers its own where it is built. */
export class ResetRegistry {
  private readonly parts: { name: string; part: ResetPart }[] = [];

  register(name: string, part: ResetPart): void {
    this.parts.push({ name, part });
  }

  /** Starts the work the current state implies (after a start, on fresh or kept state). */
  resume(): Promise<void> {
    return this.each((part) => part.resume?.());
  }

  /** Everything back to the seed. */
  async resetAll(): Promise<void> {
    await this.each((part) => part.stop?.());
    await this.each((part) => part.reset?.());
    await this.resume();
  }

  /**
   * Stops all work and resets every component a snapshot does not hold (armed faults, say),
   * then lets `apply` put the snapshot's state in place before work resumes from it (from the
   * state as it is, when `apply` fails).
   */
  async restore(apply: () => void | Promise<void>): Promise<void> {
    await this.each((part) => part.stop?.());
    await this.each((part) => (part.inSnapshots ? undefined : part.reset?.()));
    try {
      await apply();
    } finally {
      await this.resume();
    }
  }

  /** One workspace's resources back to the seed; everything else stays as it is. */
  async resetWorkspace(workspaceId: string): Promise<void> {
    await this.each((part) => part.stopWorkspace?.(workspaceId));
    await this.each((part) => part.resetWorkspace?.(workspaceId));
    await this.each((part) => part.resumeWorkspace?.(workspaceId));
  }

  /** One phase over every component in turn; a failure names the component. */
  private async each(phase: (part: ResetPart) => unknown): Promise<void> {
    for (const { name, part } of this.parts) {
      try {
        await phase(part);
      } catch (error) {
        throw new Error(`resetting the ${name} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  }
}
