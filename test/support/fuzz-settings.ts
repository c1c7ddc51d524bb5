/**
 * How many cases a property-based suite runs and from which seed: `npm test` runs `defaultRuns`
 * from the suite's fixed seed; `npm run fuzz` sets LOCALPLANE_FUZZ_RUNS and LOCALPLANE_FUZZ_RANDOM=1
 * for a random seed; LOCALPLANE_FUZZ_SEED=<seed> replays one.
 */
export function fuzzSettings(defaultRuns: number, fixedSeed: number): { runs: number; seed: number } {
  const { LOCALPLANE_FUZZ_RUNS: runs, LOCALPLANE_FUZZ_SEED: seed, LOCALPLANE_FUZZ_RANDOM: random } = process.env;
  return {
    runs: Number(runs ?? defaultRuns),
    seed: seed ? Number(seed) : random === '1' ? Math.floor(Math.random() * 2 ** 31) : fixedSeed,
  };
}
