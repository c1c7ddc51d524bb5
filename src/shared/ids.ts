import { createRandom, type Random } from './prng.ts';

export interface IdGenerator {
  uuid(): string;
  /** Restarts the sequence, so ids after a reset repeat those after start. */
  reset(): void;
}

/** A random-looking RFC 4122 version-4 UUID drawn from the given PRNG. */
export function uuidFrom(random: Random): string {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i += 4) {
    const word = Math.floor(random() * 4294967296);
    bytes[i] = word & 0xff;
    bytes[i + 1] = (word >>> 8) & 0xff;
    bytes[i + 2] = (word >>> 16) & 0xff;
    bytes[i + 3] = (word >>> 24) & 0xff;
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function createIdGenerator(seed: number): IdGenerator {
  let random = createRandom(seed);
  return {
    uuid: () => uuidFrom(random),
    reset: () => {
      random = createRandom(seed);
    },
  };
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
