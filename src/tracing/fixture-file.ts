import { z } from 'zod';
import { fixtureTimestamp } from '../shared/fixture-files.ts';

/** A tracing project (session) of a workspace in workspaces.json, with the runs generated for it. */
export const tracingProjectFixture = z.object({
  id: z.guid(),
  name: z.string().min(1),
  runs: z.object({
    count: z.int().min(0),
    start: fixtureTimestamp,
    days: z.int().min(1),
  }),
});
export type TracingProjectFixture = z.infer<typeof tracingProjectFixture>;
