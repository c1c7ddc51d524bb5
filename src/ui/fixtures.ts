import type { DashboardApi } from './api.ts';

export interface FixtureWorkspace {
  id: string;
  name: string;
  tier: string;
  sessions: { id: string; name: string; first_run_start_time: string | null }[];
  deployments: { id: string; name: string }[];
}

/** What the dashboard's forms offer to pick from: GET /_localplane/fixtures (its secrets stay on the server). */
export interface Fixtures {
  workspaces: FixtureWorkspace[];
  objstore: { buckets: string[]; keys: { access_key_id: string; secret_access_key: string }[] };
}

export const readFixtures = (api: DashboardApi) => api.get<Fixtures>('/_localplane/fixtures');
