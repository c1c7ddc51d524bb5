/** mulberry32: a tiny, fast, seedable PRNG. Deterministic across platforms. */
export type Random = () => number;

const STEP = 0x6d2b79f5;

/**
 * The sequence of `seed`, from its `skip`-th draw on. mulberry32's state only ever grows by a
 * constant, so skipping ahead costs nothing.
 */
export function createRandom(seed: number, skip = 0): Random {
  let state = ((seed >>> 0) + Math.imul(skip >>> 0, STEP)) >>> 0;
  return () => {
    state = (state + STEP) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(random: Random, min: number, maxInclusive: number): number {
  return min + Math.floor(random() * (maxInclusive - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Derives a stable 32-bit seed from a string, so sub-generators do not share a sequence. */
export function seedFrom(...parts: (string | number)[]): number {
  let hash = 2166136261;
  for (const char of parts.join('\u0000')) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 16777619);
  }
  return hash >>> 0;
}
