import { notFoundError } from '../openapi/errors.ts';

/** The documented 404 of the admin routes that name a workspace. */
export const WORKSPACE_NOT_FOUND = notFoundError(
  'Workspace',
  'Workspace 00000000-0000-4000-8000-000000000001 not found',
);
