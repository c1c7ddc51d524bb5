/**
 * How a part of the instance's state is saved in a snapshot and put back from one. `Saved` is
 * what the snapshot file holds in the part's field, `Checked` what a restore makes of it before
 * anything changes, `Staged` what it readies beside the live state.
 */
export interface SnapshotSection<Saved = unknown, Checked = unknown, Staged = unknown> {
  /** The snapshot file's field that holds this part. */
  field: string;
  save(): Saved;
  /**
   * Checks a saved value and readies it; throws a sentence when it cannot be restored here.
   * `earlier` holds what the sections registered before this one made of their fields. A
   * snapshot file restored again while unchanged is not checked again.
   */
  check(saved: Saved, earlier: ReadonlyMap<string, unknown>): Checked;
  /** Removes what `check` wrote, once the checked file is replaced or the instance stops. */
  forget?(checked: Checked): void;
  /** Readies the load beside the live state, changing nothing; throws a sentence when it cannot. */
  stage?(checked: Checked): Staged;
  /** Removes what `stage` readied, once the load is over or when it is not reached. */
  unstage?(staged: Staged): void;
  /** Puts the checked value in place, with all work stopped. */
  load(checked: Checked, staged: Staged): void | Promise<void>;
}

/**
 * What a part of the instance does when the instance is reset, in three phases run in turn
 * over every part (each phase in registration order): `stop` ends work in flight, `reset` puts
 * the state back to the seed, `resume` starts again the work that state implies. The
 * `*Workspace` hooks do the same for one workspace's resources; a part without them has no
 * per-workspace state and is left as it is. A part with a `snapshot` section is saved in
 * snapshots, and a restore puts it back instead of resetting it.
 */
export interface StatePart {
  stop?(): void | Promise<void>;
  reset?(): void | Promise<void>;
  resume?(): void | Promise<void>;
  stopWorkspace?(workspaceId: string): void | Promise<void>;
  resetWorkspace?(workspaceId: string): void | Promise<void>;
  resumeWorkspace?(workspaceId: string): void | Promise<void>;
  snapshot?: SnapshotSection;
}

/** The instance's state parts: every module registers its own where it is built. */
export class StateParts {
  private readonly parts: { name: string; part: StatePart }[] = [];

  register(name: string, part: StatePart): void {
    this.parts.push({ name, part });
  }

  /** The snapshot sections, in registration order. */
  snapshotSections(): SnapshotSection[] {
    return this.parts.flatMap(({ part }) => (part.snapshot ? [part.snapshot] : []));
  }

  /** Starts the work the current state implies (after a start, on fresh or kept state). */
  resume(): Promise<void> {
    return this.each((part) => part.resume?.());
  }

  /** Everything back to the seed, but the parts named in `keep`, which stay as they are. */
  async resetAll(keep: readonly string[] = []): Promise<void> {
    await this.each((part) => part.stop?.());
    await this.each((part, name) => (keep.includes(name) ? undefined : part.reset?.()));
    await this.resume();
  }

  /**
   * Stops all work and resets every part a snapshot does not hold (armed faults, say), then
   * lets `load` put the snapshot's parts in place before work resumes from them (from the
   * state as it is, when `load` fails).
   */
  async restore(load: () => void | Promise<void>): Promise<void> {
    await this.each((part) => part.stop?.());
    await this.each((part) => (part.snapshot ? undefined : part.reset?.()));
    try {
      await load();
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

  /** One phase over every part in turn; a failure names the part. */
  private async each(phase: (part: StatePart, name: string) => unknown): Promise<void> {
    for (const { name, part } of this.parts) {
      try {
        await phase(part, name);
      } catch (error) {
        throw new Error(`resetting the ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
    }
  }
}
