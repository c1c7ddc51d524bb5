import type { SnapshotSection, StateParts } from '../shared/state-parts.ts';
import {
  openSnapshotFile,
  SnapshotFileError,
  SNAPSHOT_SECTION_FIELDS,
  writeSnapshotFile,
  type SnapshotContent,
  type SnapshotFileIdentity,
} from './format.ts';

export interface SnapshotDeps {
  /** The instance's state parts: those with a snapshot section make up a snapshot. */
  parts: StateParts;
  /**
   * The content key of the instance's fixture template (a snapshot restores only onto the same one); asked at the first
   * snapshot or restore, not at start.
   */
  template: () => string;
  seed: number;
}

/** A snapshot file read, and each of its sections checked. */
interface PreparedSnapshot {
  path: string;
  identity: SnapshotFileIdentity;
  checked: Map<string, unknown>;
}

/** Saves the whole state to a file and puts a saved state back in place, a section per state part. */
export class Snapshots {
  private readonly sections: SnapshotSection[];
  /** The last file restored, kept ready: tests restoring one snapshot before each test read and check it once. */
  private prepared: PreparedSnapshot | null = null;

  constructor(private readonly deps: SnapshotDeps) {
    this.sections = deps.parts.snapshotSections();
    const fields = this.sections.map((section) => section.field).sort();
    if (fields.join() !== [...SNAPSHOT_SECTION_FIELDS].sort().join()) {
      throw new Error(
        `the state parts save ${fields.join(', ')} in a snapshot; its format ` +
          `holds ${SNAPSHOT_SECTION_FIELDS.join(', ')}`,
      );
    }
  }

  /** Writes the state as it is now; returns the file's size. Synchronous up to the write, so the parts agree. */
  save(path: string): { path: string; bytes: number } {
    const content: Record<string, unknown> = { template: this.deps.template(), seed: this.deps.seed };
    for (const section of this.sections) content[section.field] = section.save();
    return { path, bytes: writeSnapshotFile(path, content as unknown as SnapshotContent) };
  }

  /**
   * Replaces the whole state with the file's. The whole file is checked first and each part
   * readies its load beside the live state: a bad file throws SnapshotFileError and leaves the
   * state as it was. Then work in flight is stopped and each part loads its section; the
   * restored state's work goes on as after a restart on a kept data dir.
   */
  async restore(path: string): Promise<void> {
    const { checked } = this.prepare(path);
    const staged: { section: SnapshotSection; value: unknown }[] = [];
    try {
      for (const section of this.sections) {
        if (!section.stage) continue;
        try {
          staged.push({ section, value: section.stage(checked.get(section.field)) });
        } catch (error) {
          throw new SnapshotFileError(`${path} cannot be restored here: ${(error as Error).message}`);
        }
      }
      const stagedOf = (section: SnapshotSection) => staged.find((entry) => entry.section === section)?.value;
      await this.deps.parts.restore(async () => {
        for (const section of this.sections) await section.load(checked.get(section.field), stagedOf(section));
      });
    } finally {
      for (const { section, value } of staged.reverse()) section.unstage?.(value);
    }
  }

  /** Removes what checking the last restored file wrote. */
  discard(): void {
    if (!this.prepared) return;
    this.forget(this.prepared.checked);
    this.prepared = null;
  }

  /** The file read and each section checked, or the one kept from before while the file is unchanged. */
  private prepare(path: string): PreparedSnapshot {
    return openSnapshotFile(path, (identity, read) => {
      if (this.prepared?.path === path && this.prepared.identity === identity) return this.prepared;
      this.discard();
      const snapshot = read();
      const refuse = (why: string) => new SnapshotFileError(`${path} cannot be restored here: ${why}`);
      if (snapshot.template !== this.deps.template()) {
        throw refuse(
          snapshot.seed === this.deps.seed
            ? 'it was taken with other fixtures or another localplane version'
            : `it was taken with seed ${snapshot.seed}, this instance has seed ${this.deps.seed}`,
        );
      }
      const checked = new Map<string, unknown>();
      try {
        for (const section of this.sections)
          checked.set(section.field, section.check(snapshot[section.field as keyof SnapshotContent], checked));
      } catch (error) {
        this.forget(checked);
        throw refuse((error as Error).message);
      }
      return (this.prepared = { path, identity, checked });
    });
  }

  private forget(checked: Map<string, unknown>): void {
    for (const section of this.sections) if (checked.has(section.field)) section.forget?.(checked.get(section.field));
  }
}
