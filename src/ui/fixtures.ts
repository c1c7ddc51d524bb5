import type { FixturesView } from '../admin/schemas.ts';
import type { DashboardApi } from './api.ts';

export type { FixturesView };
export type FixtureWorkspace = FixturesView['workspaces'][number];

/** What the dashboard's forms offer to pick from: GET /_localplane/fixtures (its secrets stay on the server). */
export const readFixtures = (api: DashboardApi) => api.get<FixturesView>('/_localplane/fixtures');
