import type { Db } from '../shared/db.ts';
import type { WorkspacesFile } from './fixture-file.ts';
import { WorkspaceStore } from './store.ts';

/** Seeds a template with workspaces.json's workspaces (their tracing projects are the tracing domain's). */
export function seedWorkspaces(db: Db, file: WorkspacesFile): void {
  for (const { sessions: _sessions, ...workspace } of file.workspaces) WorkspaceStore.insert(db, workspace);
}
