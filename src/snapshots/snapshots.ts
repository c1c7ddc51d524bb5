import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { applyLimitsPatch, DEFAULT_LIMITS, type Limits, type LimitsPatch } from '../config.ts';
import { isSafeTreePath } from '../objstore/storage/tree.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import type { Clock } from '../shared/clock.ts';
import { attachSnapshotImage, checkSnapshotImage, replaceStateFromSnapshot, serializeState, type Db, type TableSet } from '../shared/db.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { ResetRegistry } from '../shared/resets.ts';
import { readSnapshotFile, SnapshotFileError, snapshotFileIdentity, writeSnapshotFile, type SnapshotContent } from './format.ts';

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

/** A snapshot file read, checked, and its database unpacked where SQLite can attach it. */
interface PreparedSnapshot {
  identity: string;
  snapshot: SnapshotContent;
  limits: Limits;
  image: string;
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
   * Replaces the whole state with the file's. Everything is checked first: a bad file throws
   * SnapshotFileError and leaves the state as it was. Work in flight is stopped, and the
   * restored state's work goes on as after a restart on a kept data dir.
   */
  async restore(path: string): Promise<void> {
    const { db, tables, objstore, ids, clock, resets } = this.deps;
    const { snapshot, limits, image } = this.prepare(path);
    const detach = attachSnapshotImage(db, image);
    let attached = true;
    try {
      await resets.restore(async () => {
        replaceStateFromSnapshot(db, tables);
        detach();
        attached = false;
        await objstore.replaceContents(snapshot.objstore);
        ids.continueFrom(snapshot.idsDrawn);
        clock.reset();
        if (snapshot.clock.frozen) clock.freeze();
        clock.set(snapshot.clock.now);
        this.deps.limits.set(limits);
      });
    } finally {
      if (attached) detach();
    }
  }

  /** Removes the unpacked database of the last restore. */
  discard(): void {
    if (!this.prepared) return;
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${this.prepared.image}${suffix}`, { force: true });
    this.prepared = null;
  }

  private prepare(path: string): PreparedSnapshot {
    const identity = snapshotFileIdentity(path);
    if (this.prepared?.identity === identity) return this.prepared;
    this.discard();
    const snapshot = readSnapshotFile(path);
    const refuse = (why: string) => new SnapshotFileError(`${path} cannot be restored here: ${why}`);
    if (snapshot.template !== this.deps.template()) {
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
    const prepared = { identity, snapshot, limits, image: join(this.deps.scratchDir, 'restoring.sqlite') };
    this.prepared = prepared;
    writeFileSync(prepared.image, snapshot.database);
    try {
      const detach = attachSnapshotImage(this.deps.db, prepared.image);
      try {
        checkSnapshotImage(this.deps.db, this.deps.tables);
      } finally {
        detach();
      }
    } catch (error) {
      this.discard();
      throw refuse((error as Error).message);
    }
    return prepared;
  }
}
