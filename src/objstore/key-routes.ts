import { z } from 'zod';
import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { conflict, notFound } from '../shared/errors.ts';
import { WORKSPACE_NOT_FOUND } from '../workspaces/errors.ts';
import type { ObjstoreKeyStore } from './key-store.ts';
import { OBJSTORE_PERMISSIONS, type ObjstoreKey } from './types.ts';

export interface ObjstoreKeyRouteDeps {
  keys: ObjstoreKeyStore;
  workspaceExists(workspaceId: string): boolean;
}

export const objstoreKeySchema = z.object({
  access_key_id: z.string(),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
  workspace_id: z.guid().nullable(),
});

const keyCreate = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
  /**
   * The workspace whose account the key acts for (buckets it creates are that workspace's); none for the shared
   * account.
   */
  workspace_id: z.guid().optional(),
});
export type ObjstoreKeyInput = z.input<typeof keyCreate>;
export type ObjstoreKeyView = z.output<typeof objstoreKeySchema>;

/** A key pair without its secret: the caller chose the secret and keeps it. */
export const objstoreKeyView = (key: ObjstoreKey) => ({
  access_key_id: key.accessKeyId,
  permissions: key.permissions,
  workspace_id: key.workspaceId ?? null,
});

/** /_localplane/objstore/keys: the objstore's key pairs, added and revoked at run time. */
export function objstoreKeyRoutes(deps: ObjstoreKeyRouteDeps) {
  const app = new OpenApiHono('admin');
  app.openapi(
    {
      method: 'get',
      path: '/objstore/keys',
      summary: "The objstore's key pairs, without their secrets",
      response: { status: 200, description: 'The keys', schema: z.array(objstoreKeySchema) },
    },
    (c) => c.json(deps.keys.list().map(objstoreKeyView)),
  );
  app.openapi(
    {
      method: 'post',
      path: '/objstore/keys',
      summary: 'Add an objstore key pair',
      body: keyCreate,
      response: { status: 201, description: 'The key, without its secret', schema: objstoreKeySchema },
      errors: [
        WORKSPACE_NOT_FOUND,
        httpError(409, 'A key of that id exists', { exists: 'Objstore key AKIAEXAMPLE already exists' }),
      ],
    },
    (c, { body }) => {
      const workspaceId = body.workspace_id ?? null;
      if (workspaceId !== null && !deps.workspaceExists(workspaceId))
        throw notFound(`Workspace ${workspaceId} not found`);
      const key = {
        accessKeyId: body.access_key_id,
        secretAccessKey: body.secret_access_key,
        permissions: body.permissions,
        workspaceId,
      };
      if (!deps.keys.add(key)) throw conflict(`Objstore key ${body.access_key_id} already exists`);
      return c.json(objstoreKeyView(key), 201);
    },
  );
  app.openapi(
    {
      method: 'delete',
      path: '/objstore/keys/:access_key_id',
      summary: 'Revoke an objstore key pair',
      response: { status: 204, description: 'Revoked' },
      errors: [notFoundError('Objstore key', 'Objstore key AKIAEXAMPLE not found')],
    },
    (c) => {
      const accessKeyId = c.req.param('access_key_id')!;
      if (!deps.keys.revoke(accessKeyId)) throw notFound(`Objstore key ${accessKeyId} not found`);
      return c.body(null, 204);
    },
  );

  return app;
}
