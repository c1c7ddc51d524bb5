import type { ProgressListener } from '../progress.ts';
import type { Db } from '../shared/db.ts';
import { seedFrom } from '../shared/prng.ts';
import type { AppendRegion } from '../shared/template-cache.ts';
import { parseTimestamp } from '../shared/time.ts';
import type { TracingProjectFixture } from './fixture-file.ts';
import { generateRuns, insertRuns } from './generator.ts';
import { TracingStore } from './store.ts';

/** Rows between two progress reports while a template is built. */
const PROGRESS_EVERY_ROWS = 1000;

/** Yields the rows, reporting every PROGRESS_EVERY_ROWS of them and the last one. */
function* reportingRows<T>(rows: Iterable<T>, report: (rowsDone: number) => void): Generator<T> {
  let done = 0;
  for (const row of rows) {
    yield row;
    if (++done % PROGRESS_EVERY_ROWS === 0) report(done);
  }
  report(done);
}

/** A workspace's tracing projects as the fixtures list them. */
export interface WorkspaceTracingProjects {
  id: string;
  sessions: readonly TracingProjectFixture[];
}

/**
 * Seeds a template with each workspace's tracing projects and their generated runs, the runs also laid out in columnar
 * chunks in `region` (see run-chunks.ts). `progress` hears of every thousand runs.
 */
export function seedTracingProjects(
  db: Db,
  workspaces: readonly WorkspaceTracingProjects[],
  seed: number,
  region: AppendRegion,
  progress?: ProgressListener,
): void {
  const runsTotal = workspaces.reduce(
    (sum, workspace) => sum + workspace.sessions.reduce((runs, session) => runs + session.runs.count, 0),
    0,
  );
  let runsBefore = 0;
  for (const workspace of workspaces) {
    for (const session of workspace.sessions) {
      const startMicros = parseTimestamp(session.runs.start)!;
      TracingStore.insertSession(db, {
        id: session.id,
        tenant_id: workspace.id,
        name: session.name,
        created_at: startMicros,
      });
      const rows = generateRuns({
        tenantId: workspace.id,
        sessionId: session.id,
        count: session.runs.count,
        startMicros,
        days: session.runs.days,
        seed: seedFrom(seed, session.id),
      });
      const before = runsBefore;
      insertRuns(
        db,
        progress
          ? reportingRows(rows, (done) => progress({ kind: 'fixtures', runsDone: before + done, runsTotal }))
          : rows,
      );
      TracingStore.writeRunChunks(db, session.id, region);
      runsBefore += session.runs.count;
    }
  }
}
