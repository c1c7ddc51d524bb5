import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { applyLimitsPatch, DEFAULT_LIMITS, type Limits, type LimitsPatch } from '../config.ts';
import { isSafeTreePath } from '../objstore/contents.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import type { Clock } from '../shared/clock.ts';
import { attachStateImage, replaceStateFromSnapshot, serializeState, type Db, type TableSet } from '../shared/db.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { ResetRegistry } from '../shared/resets.ts';
import { readSnapshotFile, SnapshotFileError, writeSnapshotFile } from './format.ts';

export interface SnapshotDeps {
  db: Db;
  tables: readonly TableSet[];
  objstore: EmbeddedObjstore;
  ids: IdGenerator;
  clock: Clock;
  limits: { get(): Limits; set(limits: Limits): void };
  resets: ResetRegistry;
  /** The content key of the instance's fixture template: a snapshot restores only onto the same one. */
  template: string;
  seed: number;
  /** Where the database image is unpacked while it is restored. */
  scratchDir: string;
}

/** Saves the whole state to a file and puts a saved state back in place. */
export class Snapshots {
  constructor(private readonly deps: SnapshotDeps) {}

  /** Writes the state as it is now; returns the file's size. Synchronous up to the write, so the database and the objstore agree. */
  save(path: string): { path: string; bytes: number } {
    const { db, objstore, ids, clock, limits, template, seed } = this.deps;
    const bytes = writeSnapshotFile(path, {
      template,
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
   * Replaces the whole state with the file's. Everything is checked first: a bad file throws
   * SnapshotFileError and leaves the state as it was. Work in flight is stopped, and the
   * restored state's work goes on as after a restart on a kept data dir.
   */
  async restore(path: string): Promise<void> {
    const { db, tables, objstore, ids, clock, resets, scratchDir } = this.deps;
    const snapshot = readSnapshotFile(path);
    const refuse = (why: string) => new SnapshotFileError(`${path} cannot be restored here: ${why}`);
    if (snapshot.template !== this.deps.template) {
      throw refuse(
        snapshot.seed === this.deps.seed
          ? 'it was taken with other fixtures or another localplane version'
          : `it was taken with seed ${snapshot.seed}, this instance has seed ${this.deps.seed}`,
      );
    }
    const unsafe = snapshot.objstore.find((entry) => !isSafeTreePath(entry.path));
    if (unsafe) throw refuse(`its objstore path ${JSON.stringify(unsafe.path)} leaves the store`);
    let limits: Limits;
    try {
      limits = applyLimitsPatch(DEFAULT_LIMITS, snapshot.limits as LimitsPatch);
    } catch {
      throw refuse('its limits are not valid');
    }
    const image = join(scratchDir, 'restoring.sqlite');
    const removeImage = () => {
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${image}${suffix}`, { force: true });
    };
    writeFileSync(image, snapshot.database);
    let detach: () => void;
    try {
      detach = attachStateImage(db, image, tables);
    } catch (error) {
      removeImage();
      throw refuse((error as Error).message);
    }
    try {
      await resets.restore(async () => {
        replaceStateFromSnapshot(db, tables);
        detach();
        await objstore.replaceContents(snapshot.objstore);
        ids.continueFrom(snapshot.idsDrawn);
        clock.reset();
        if (snapshot.clock.frozen) clock.freeze();
        clock.set(snapshot.clock.now);
        this.deps.limits.set(limits);
      });
    } finally {
      if (db.prepare("SELECT 1 FROM pragma_database_list WHERE name = 'snapshot'").get()) detach();
      removeImage();
    }
  }
}
