import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seedFrom } from '../../src/shared/prng.ts';
import { parseTimestamp } from '../../src/shared/time.ts';
import { generateRuns } from '../../src/tracing/generator.ts';
import type { RunRow } from '../../src/tracing/schema.ts';

const fixturesPath = fileURLToPath(new URL('../../fixtures/workspaces.json', import.meta.url));

/** Regenerated runs by session and seed: 50,000 runs take 0.75 s to make, and several files read them. */
const generated = new Map<string, readonly RunRow[]>();

/** The seeded runs of a fixture session, regenerated from the generator: the source an export must match. */
export function seededRuns(sessionId: string, seed = 1): readonly RunRow[] {
  const key = `${sessionId} ${seed}`;
  let runs = generated.get(key);
  if (!runs) {
    runs = Object.freeze(generateSeededRuns(sessionId, seed));
    generated.set(key, runs);
  }
  return runs;
}

function generateSeededRuns(sessionId: string, seed: number): RunRow[] {
  const file = JSON.parse(readFileSync(fixturesPath, 'utf8')) as {
    workspaces: { id: string; sessions: { id: string; runs: { count: number; start: string; days: number } }[] }[];
  };
  for (const workspace of file.workspaces) {
    const session = workspace.sessions.find((candidate) => candidate.id === sessionId);
    if (!session) continue;
    return [
      ...generateRuns({
        tenantId: workspace.id,
        sessionId,
        count: session.runs.count,
        startMicros: parseTimestamp(session.runs.start)!,
        days: session.runs.days,
        seed: seedFrom(seed, sessionId),
      }),
    ];
  }
  throw new Error(`no fixture session ${sessionId}`);
}

export function inWindow(runs: readonly RunRow[], start: string, end: string): RunRow[] {
  const from = parseTimestamp(start)!;
  const to = parseTimestamp(end)!;
  return runs.filter((run) => run.start_time >= from && run.start_time < to);
}
