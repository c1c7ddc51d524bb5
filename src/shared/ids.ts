import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { PRIVATE_FILE_MODE } from './private-files.ts';
import { createRandom, type Random } from './prng.ts';

export interface IdGenerator {
  uuid(): string;
  /** Restarts the sequence, so ids after a reset repeat those after start. */
  reset(): void;
  /** How many ids of the sequence were handed out. */
  drawn(): number;
  /** Goes on after the first `count` ids of the sequence (a restored snapshot's). */
  continueFrom(count: number): void;
}

/** How many PRNG draws one UUID takes: 16 bytes, 4 a draw. */
const DRAWS_PER_UUID = 4;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A random-looking RFC 4122 version-4 UUID drawn from the given PRNG: four draws, each four
 * bytes low byte first, with the version and variant bits set. Hot when fixtures are built.
 */
export function uuidFrom(random: Random): string {
  const a = Math.floor(random() * 4294967296);
  const b = Math.floor(random() * 4294967296);
  const c = Math.floor(random() * 4294967296);
  const d = Math.floor(random() * 4294967296);
  return (
    HEX[a & 0xff]! +
    HEX[(a >>> 8) & 0xff]! +
    HEX[(a >>> 16) & 0xff]! +
    HEX[a >>> 24]! +
    '-' +
    HEX[b & 0xff]! +
    HEX[(b >>> 8) & 0xff]! +
    '-' +
    HEX[((b >>> 16) & 0x0f) | 0x40]! +
    HEX[b >>> 24]! +
    '-' +
    HEX[(c & 0x3f) | 0x80]! +
    HEX[(c >>> 8) & 0xff]! +
    '-' +
    HEX[(c >>> 16) & 0xff]! +
    HEX[c >>> 24]! +
    HEX[d & 0xff]! +
    HEX[(d >>> 8) & 0xff]! +
    HEX[(d >>> 16) & 0xff]! +
    HEX[d >>> 24]!
  );
}

/**
 * Where a generator records how far into its sequence ids have been handed out, so that an
 * instance restarted on the same state goes on after them instead of repeating them.
 */
export interface IdReservations {
  /** How many ids of the sequence are taken (0 when none are). */
  load(): number;
  /** Records that the first `count` ids are taken; called before any of them is handed out. */
  save(count: number): void;
}

/** Ids are reserved this many at a time: a restart skips the rest of a reservation, used or not. */
const RESERVATION_SIZE = 1024;

/**
 * The seeded id sequence. With `reservations`, it starts after the ids reserved before (none
 * for fresh state, so a fresh instance of a given seed draws the same ids every time).
 */
export function createIdGenerator(seed: number, reservations?: IdReservations): IdGenerator {
  let drawn = reservations?.load() ?? 0;
  let reserved = drawn;
  let random = createRandom(seed, drawn * DRAWS_PER_UUID);
  return {
    uuid: () => {
      if (reservations && drawn >= reserved) {
        reserved = drawn + RESERVATION_SIZE;
        reservations.save(reserved);
      }
      drawn++;
      return uuidFrom(random);
    },
    reset: () => {
      // Nothing reserved since the last reset: the record already says none are taken.
      if (reserved !== 0) reservations?.save(0);
      drawn = reserved = 0;
      random = createRandom(seed);
    },
    drawn: () => drawn,
    continueFrom: (count) => {
      drawn = reserved = count;
      reservations?.save(count);
      random = createRandom(seed, count * DRAWS_PER_UUID);
    },
  };
}

/**
 * Reservations kept in a small file, replaced in one rename. Not a table of the instance
 * database on purpose: a reservation made inside a transaction that is then rolled back would
 * vanish with it while the ids it covered are handed out anyway.
 */
export function idReservationsFile(path: string): IdReservations {
  return {
    load() {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
        throw error;
      }
      const count = Number(text);
      if (!Number.isSafeInteger(count) || count < 0)
        throw new Error(`${path} does not hold a count of ids: ${JSON.stringify(text)}`);
      return count;
    },
    save(count) {
      // A new file each time (the last one was renamed away), so it is made with this mode.
      writeFileSync(`${path}.next`, String(count), { mode: PRIVATE_FILE_MODE });
      renameSync(`${path}.next`, path);
    },
  };
}

/** A UUID in lower case, as the generator writes them, for building patterns. */
export const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
export const UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`, 'i');
