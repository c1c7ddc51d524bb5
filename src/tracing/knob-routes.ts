import { z } from 'zod';
import { requestTimestamp } from '../shared/validation.ts';
import type { Clock } from '../shared/clock.ts';
import { notFound } from '../shared/errors.ts';
import { seedFrom } from '../shared/prng.ts';
import { formatNullableTimestamp, MICROS_PER_DAY } from '../shared/time.ts';
import { EXAMPLE_ID, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { generateRuns } from './generator.ts';
import type { TracingSession, TracingStore } from './store.ts';

const timestamp = z.iso.datetime({ offset: true });

export const sessionViewSchema = z.object({
  id: z.guid(),
  name: z.string(),
  run_count: z.int(),
  first_run_start_time: timestamp.nullable(),
  last_run_start_time: timestamp.nullable(),
});

const runsAddedSchema = z.object({ added: z.int(), session: sessionViewSchema });

export interface TracingKnobDeps {
  tracing: TracingStore;
  clock: Pick<Clock, 'now'>;
  seed: number;
}

/** One call adds at most this many runs, so that the server is never busy for long. */
const MAX_RUNS_PER_CALL = 100_000;

const sessionParams = z.object({ session_id: z.guid() });
const runsAddition = z.object({
  count: z.int().min(1).max(MAX_RUNS_PER_CALL).default(100),
  /** Where the runs' root start times begin; default `days` before the emulator clock's now. */
  start_time: requestTimestamp.optional(),
  days: z.number().positive().max(366).default(1),
});
export type RunsAddition = z.input<typeof runsAddition>;
export type RunsAdded = z.output<typeof runsAddedSchema>;

/** A tracing project as GET /_localplane/fixtures lists it. */
export function sessionView(tracing: TracingStore, session: TracingSession) {
  const stats = tracing.stats(session.id);
  return {
    id: session.id,
    name: session.name,
    run_count: stats.run_count,
    first_run_start_time: formatNullableTimestamp(stats.first_run_start_time),
    last_run_start_time: formatNullableTimestamp(stats.last_run_start_time),
  };
}

/** /_localplane/sessions: traces arriving in a tracing project, as the generator makes them. */
export function tracingKnobRoutes({ tracing, clock, seed }: TracingKnobDeps) {
  const app = new OpenApiHono('admin');

  app.openapi(
    {
      method: 'post',
      path: '/:session_id/runs',
      summary: 'Add generated runs to a tracing project',
      params: sessionParams,
      body: runsAddition,
      response: { status: 201, description: 'How many runs were added, and the project now', schema: runsAddedSchema },
      errors: [notFoundError('Session', `Session ${EXAMPLE_ID} not found`)],
    },
    (c, { params: { session_id }, body: { count, start_time, days } }) => {
      const session = tracing.sessionById(session_id);
      if (!session) throw notFound(`Session ${session_id} not found`);
      const before = tracing.stats(session.id).run_count;
      const added = tracing.addRuns(
        generateRuns({
          tenantId: session.tenant_id,
          sessionId: session.id,
          count,
          startMicros: start_time ?? clock.now() - Math.round(days * MICROS_PER_DAY),
          days,
          // Each addition to a project draws other run ids than the ones before it.
          seed: seedFrom(seed, session.id, before),
        }),
      );
      return c.json({ added, session: sessionView(tracing, session) }, 201);
    },
  );

  return app;
}
