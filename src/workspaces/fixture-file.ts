import { z } from 'zod';
import { tracingProjectFixture } from '../tracing/fixture-file.ts';
import { TIERS } from './store.ts';

const workspaceFixture = z.object({
  id: z.guid(),
  name: z.string().min(1),
  tier: z.enum(TIERS),
  api_key: z.string().min(1),
  sessions: z.array(tracingProjectFixture),
});

/** workspaces.json: the workspaces, their API keys and tracing projects. */
export const workspacesFile = z.object({
  workspaces: z.array(workspaceFixture).min(1),
  unknown_api_key: z.string().min(1),
});
export type WorkspacesFile = z.infer<typeof workspacesFile>;
