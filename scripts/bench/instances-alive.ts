/**
 * Many in-process instances alive at once in one process, as a test run that keeps one per
 * file: spawned by the bench (`node --expose-gc --import tsx instances-alive.ts <count>`), it
 * creates one instance to load the modules and fill the template cache, then `count` more, each
 * timed, and prints as JSON their creation times and how much the resident set and the retained
 * heap and external memory (after collecting garbage) grew with them.
 */
import { readFileSync } from 'node:fs';
import { createLocalplane, type InProcessLocalplane } from '../../dist/index.js';

const count = Number(process.argv[2]);
const quiet = { log: () => {} };
const residentBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

function settled(): { resident: number; retained: number } {
  // Twice: the first collection may leave what finalizers of the first freed.
  globalThis.gc!();
  globalThis.gc!();
  const { heapUsed, external } = process.memoryUsage();
  return { resident: residentBytes(), retained: heapUsed + external };
}

const instances: InProcessLocalplane[] = [await createLocalplane(quiet)];
const before = settled();
const createMs: number[] = [];
for (let created = 0; created < count; created++) {
  const startedAt = performance.now();
  instances.push(await createLocalplane(quiet));
  createMs.push(performance.now() - startedAt);
}
const after = settled();
for (const lp of instances) await lp.stop();
const residentBytesEach = (after.resident - before.resident) / count;
const retainedBytesEach = (after.retained - before.retained) / count;
process.stdout.write(`${JSON.stringify({ createMs, residentBytesEach, retainedBytesEach })}\n`);
