/**
 * What every module of an instance is built on: its data dir and database, ids, clock,
 * scheduler and limits, the registry of its state parts and its teardown list.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { applyLimitsPatch, DEFAULT_LIMITS, InstanceLimits, type Limits, type LimitsPatch } from './config.ts';
import type { ProgressListener } from './progress.ts';
import { createClock, type Clock } from './shared/clock.ts';
import { createClockControl, type ClockControl } from './shared/clock-control.ts';
import {
  attachSnapshotImage,
  hasState,
  JOURNAL_SUFFIXES,
  openInstanceDb,
  replaceStateFromSnapshot,
  resetInstanceDb,
  resetWorkspaceRows,
  serializeState,
  type Db,
  type TableSet,
} from './shared/db.ts';
import { createIdGenerator, idReservationsFile, type IdGenerator } from './shared/ids.ts';
import { printableError } from './shared/log-text.ts';
import { makePrivateFolder, writePrivateFile } from './shared/private-files.ts';
import { Scheduler } from './shared/scheduler.ts';
import { StateParts, type SnapshotSection } from './shared/state-parts.ts';
import {
  installTemplate,
  tempTemplatesDir,
  type FixtureSource,
  type TemplateSeeding,
} from './shared/template-cache.ts';
import { checkSnapshotImage, invalidRow } from './shared/stored-rows.ts';
import { Teardown } from './shared/teardown.ts';

export interface CoreOptions {
  dataDir?: string;
  seed?: number;
  limits?: LimitsPatch;
  freezeClock?: boolean;
  cacheDir?: string;
  progress?: ProgressListener;
}

export interface InstanceCore {
  dataDir: string;
  seed: number;
  /** The instance's database file and the fixture template it reads the seed from. */
  database: { path: string; templatePath: string };
  db: Db;
  ids: IdGenerator;
  clock: Clock;
  clockControl: ClockControl;
  scheduler: Scheduler;
  limits: InstanceLimits;
  log: (line: string) => void;
  progress?: ProgressListener;
  parts: StateParts;
  teardown: Teardown;
}

/** The fixture files an instance's database is seeded from, and how (for a seed, telling progress to a listener). */
export interface InstanceTemplate {
  fixtures: FixtureSource;
  seeding: (seed: number, progress?: ProgressListener) => TemplateSeeding;
}

/** The clock as a snapshot holds it. */
interface SavedClock {
  now: number;
  frozen: boolean;
}

/**
 * What a restore makes of a snapshot's database before anything changes: the image unpacked where SQLite can attach it.
 */
export interface CheckedDatabase {
  image: string;
}

/** Reads a checked snapshot database through `read`, with it attached as schema `snapshot`. */
export function readSnapshotDatabase<T>(core: InstanceCore, checked: CheckedDatabase, read: (db: Db) => T): T {
  const detach = attachSnapshotImage(core.db, checked.image);
  try {
    return read(core.db);
  } finally {
    detach();
  }
}

/** The state part of the emulator clock, which `reset({ keepClock: true })` leaves as it is. */
export const CLOCK_PART = 'clock';

/**
 * Makes the data dir (a temp dir when none is given), its database from the fixture template
 * and the instance's clock and scheduler. A failure undoes what was made.
 */
export async function openCore(
  options: CoreOptions,
  template: InstanceTemplate,
  tables: readonly TableSet[],
  log: (line: string) => void,
): Promise<InstanceCore> {
  const seed = options.seed ?? 1;
  const limits = new InstanceLimits(applyLimitsPatch(DEFAULT_LIMITS, options.limits));
  const dataDir = options.dataDir ? resolve(options.dataDir) : mkdtempSync(join(tmpdir(), 'localplane-'));
  const teardown = new Teardown();
  if (options.dataDir === undefined) teardown.add('resources', () => rmSync(dataDir, { recursive: true, force: true }));
  // The data dir's own fixture template (see installTemplate): it never needs the cache again.
  const database = { path: join(dataDir, 'localplane.sqlite'), templatePath: join(dataDir, 'seed.sqlite') };
  let db: Db;
  let ids: IdGenerator;
  try {
    makePrivateFolder(dataDir);
    ids = createIdGenerator(seed, idReservationsFile(join(dataDir, 'id-sequence')));
    if (!existsSync(database.templatePath)) {
      await installTemplate({
        fixtures: template.fixtures,
        seeding: template.seeding(seed, options.progress),
        seed,
        tables,
        cacheDir: options.cacheDir,
        destination: database.templatePath,
        copiesDir: options.dataDir === undefined ? tempTemplatesDir() : undefined,
      });
    }
    db = openInstanceDb(database.path, database.templatePath, tables, { durable: options.dataDir !== undefined });
    teardown.add('resources', () => db.close());
    if (!hasState(db, 'workspaces')) resetInstanceDb(db, tables);
    else refuseUnusableRows(db, tables, database.path);
  } catch (error) {
    await teardown.run();
    throw error;
  }

  const clock = createClock();
  const freezeClock = options.freezeClock ?? false;
  clock.restart(freezeClock);
  const scheduler = new Scheduler(clock, {
    onError: (label, error) => log(`task "${label}" failed: ${printableError(error)}`),
    onWatchdog: (line) => log(`error: ${line}`),
    inFlightLimitMs: () => limits.get().task_in_flight_limit_seconds * 1000,
  });
  teardown.add('work', () => scheduler.stop());
  const parts = new StateParts();
  parts.register('scheduler', { stop: () => scheduler.cancelAll() });
  parts.register('limits', { reset: () => limits.reset(), snapshot: limitsSection(limits) });
  parts.register(CLOCK_PART, {
    reset: () => clock.restart(freezeClock),
    snapshot: {
      field: 'clock',
      save: () => ({ now: clock.now(), frozen: clock.frozen }),
      check: (saved: SavedClock) => saved,
      load: (saved: SavedClock) => clock.restart(saved.frozen, saved.now),
    },
  });
  parts.register('ids', {
    reset: () => ids.reset(),
    snapshot: {
      field: 'idsDrawn',
      save: () => ids.drawn(),
      check: (drawn: number) => drawn,
      load: (drawn: number) => ids.continueFrom(drawn),
    },
  });
  parts.register('database', {
    reset: () => resetInstanceDb(db, tables),
    resetWorkspace: (workspaceId) => resetWorkspaceRows(db, tables, workspaceId),
    snapshot: databaseSection(db, tables, join(dataDir, 'restoring.sqlite')),
  });
  const clockControl = createClockControl(clock, scheduler);
  return {
    dataDir,
    seed,
    database,
    db,
    ids,
    clock,
    clockControl,
    scheduler,
    limits,
    log,
    progress: options.progress,
    parts,
    teardown,
  };
}

/**
 * A kept data dir's database may have been written by someone else (a data dir checked into a
 * repository): rows that would make the instance reach outside its own files (a bucket name
 * becomes a folder) are refused as a restore refuses them, before anything reads them.
 */
function refuseUnusableRows(db: Db, tables: readonly TableSet[], path: string): void {
  const problem = invalidRow(db, tables, 'main');
  if (problem !== undefined)
    throw new Error(
      `${path} holds data localplane cannot use: ${problem}: remove that data dir or choose another --data-dir`,
    );
}

function limitsSection(limits: InstanceLimits): SnapshotSection<unknown, Limits> {
  return {
    field: 'limits',
    save: () => limits.get(),
    check: (saved) => {
      try {
        return applyLimitsPatch(DEFAULT_LIMITS, saved as LimitsPatch);
      } catch {
        throw new Error('its limits are not valid');
      }
    },
    load: (checked) => limits.replace(checked),
  };
}

/**
 * The database as one SQLite image; a restore unpacks it to `image`, checks it whole, and copies its rows in one
 * transaction.
 */
function databaseSection(
  db: Db,
  tables: readonly TableSet[],
  image: string,
): SnapshotSection<Uint8Array, CheckedDatabase, () => void> {
  const remove = () => {
    for (const suffix of ['', ...JOURNAL_SUFFIXES]) rmSync(`${image}${suffix}`, { force: true });
  };
  return {
    field: 'database',
    save: () => serializeState(db),
    check: (saved) => {
      try {
        writePrivateFile(image, saved);
        const detach = attachSnapshotImage(db, image);
        try {
          checkSnapshotImage(db, tables);
        } finally {
          detach();
        }
      } catch (error) {
        remove();
        throw error;
      }
      return { image };
    },
    forget: remove,
    stage: () => attachSnapshotImage(db, image),
    unstage: (detach) => detach(),
    load: () => replaceStateFromSnapshot(db, tables),
  };
}
