import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { applyLimitsPatch, DEFAULT_LIMITS, type Limits, type LimitsPatch } from '../config.ts';
import { createdBucketNames } from '../objstore/bucket-store.ts';
import type { EmbeddedObjstore, StagedContents } from '../objstore/types.ts';
import type { Clock } from '../shared/clock.ts';
import { attachSnapshotImage, JOURNAL_SUFFIXES, replaceStateFromSnapshot, serializeState, type Db, type TableSet } from '../shared/db.ts';
import type { IdGenerator } from '../shared/ids.ts';
import { writePrivateFile } from '../shared/private-files.ts';
import type { ResetRegistry } from '../shared/resets.ts';
import { checkSnapshotImage } from '../shared/stored-rows.ts';
import { openSnapshotFile, SnapshotFileError, writeSnapshotFile, type SnapshotContent, type SnapshotFileIdentity } from './format.ts';

export interface SnapshotDeps {
  db: Db;
  tables: readonly TableSet[];
  objstore: EmbeddedObjstore;
  ids: IdGenerator;
  clock: Clock;
  limits: { get(): Limits; set(limits: Limits): void };
  resets: ResetRegistry;
  /** The content key of the instance's fixture template (a snapshot restores only onto the same one); asked at the first snapshot or restore, not at start. */
  template: () => string;
  seed: number;
  /** Where the database of the last snapshot restored is unpacked. */
  scratchDir: string;
}

/** A snapshot file read, checked whole, and its database unpacked where SQLite can attach it. */
interface PreparedSnapshot {
  path: string;
  identity: SnapshotFileIdentity;
  snapshot: SnapshotContent;
  limits: Limits;
  image: string;
  /** The buckets its database holds besides the configured ones. */
  createdBuckets: string[];
}

/** Saves the whole state to a file and puts a saved state back in place. */
export class Snapshots {
  /** The last file restored, kept ready: tests restoring one snapshot before each test read and check it once. */
  private prepared: PreparedSnapshot | null = null;

  constructor(private readonly deps: SnapshotDeps) {}

  /** Writes the state as it is now; returns the file's size. Synchronous up to the write, so the database and the objstore agree. */
  save(path: string): { path: string; bytes: number } {
    const { db, objstore, ids, clock, limits, template, seed } = this.deps;
    const bytes = writeSnapshotFile(path, {
      template: template(),
      seed,
      clock: { now: clock.now(), frozen: clock.frozen },
      idsDrawn: ids.drawn(),
      limits: limits.get(),
      database: serializeState(db),
      objstore: objstore.contents(),
    });
    return { path, bytes };
  }

  /**
   * Replaces the whole state with the file's. The whole file is checked first and the objstore's
   * new contents are written beside the store: a bad file throws SnapshotFileError and leaves the
   * state as it was. Then work in flight is stopped, the database rows are replaced in one
   * transaction and the new store renamed into place; the restored state's work goes on as
   * after a restart on a kept data dir.
   */
  async restore(path: string): Promise<void> {
    const { db, tables, objstore, ids, clock, resets } = this.deps;
    const { snapshot, limits, image, createdBuckets } = this.prepare(path);
    let staged: StagedContents;
    try {
      staged = objstore.stageContents(snapshot.objstore, createdBuckets);
    } catch (error) {
      throw new SnapshotFileError(`${path} cannot be restored here: its objstore cannot be written: ${(error as Error).message}`);
    }
    try {
      const detach = attachSnapshotImage(db, image);
      let attached = true;
      try {
        await resets.restore(async () => {
          replaceStateFromSnapshot(db, tables);
          detach();
          attached = false;
          await staged.install();
          ids.continueFrom(snapshot.idsDrawn);
          clock.reset();
          if (snapshot.clock.frozen) clock.freeze();
          clock.set(snapshot.clock.now);
          this.deps.limits.set(limits);
        });
      } finally {
        if (attached) detach();
      }
    } finally {
      staged.discard();
    }
  }

  /** Removes the unpacked database of the last restore. */
  discard(): void {
    if (!this.prepared) return;
    removeImage(this.prepared.image);
    this.prepared = null;
  }

  /** The file read and checked whole (structure, header, the database's tables and rows, the objstore's paths), or the one kept from before while the file is unchanged. */
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
      let limits: Limits;
      try {
        limits = applyLimitsPatch(DEFAULT_LIMITS, snapshot.limits as LimitsPatch);
      } catch {
        throw refuse('its limits are not valid');
      }
      const image = join(this.deps.scratchDir, 'restoring.sqlite');
      let createdBuckets: string[];
      try {
        writePrivateFile(image, snapshot.database);
        createdBuckets = this.checkImage(image);
        const problem = this.deps.objstore.contentsProblem(snapshot.objstore, createdBuckets);
        if (problem !== undefined) throw new Error(problem);
      } catch (error) {
        removeImage(image);
        throw refuse((error as Error).message);
      }
      return (this.prepared = { path, identity, snapshot, limits, image, createdBuckets });
    });
  }

  /** Checks the unpacked database (throws a sentence); returns the buckets it holds besides the configured ones. */
  private checkImage(image: string): string[] {
    const detach = attachSnapshotImage(this.deps.db, image);
    try {
      checkSnapshotImage(this.deps.db, this.deps.tables);
      return createdBucketNames(this.deps.db, 'snapshot');
    } finally {
      detach();
    }
  }
}

function removeImage(image: string): void {
  for (const suffix of ['', ...JOURNAL_SUFFIXES]) rmSync(`${image}${suffix}`, { force: true });
}
